#!/usr/bin/env bash
# Builds the images the local node runs, without any registry, and writes them as archives
# that node.sh loads into containerd:
#   pause.tar       localhost/oncestream/pause:1 — the pod sandbox (images/pause.c, static)
#   (no archive)    localhost/oncestream/jre-base:<Java version> — a Java runtime made with jlink
#                   from a JDK of this machine (see `jdk` below), with the system libraries it
#                   links (the stand-in for the public JRE base that src/main/docker/Dockerfile
#                   uses by default, Java 25)
#   oncestream.tar  docker.io/oncestream/oncestream:<version> — src/main/docker/Dockerfile,
#                   the file users build, built by buildah on that base
#
# Usage: images.sh build [--load] | list | clean | jdk
#   build   build what is missing or out of date (the product image after every `mvn package`);
#           --load also imports the archives into the running node
#   jdk     print the JDK the runtime is made from: $ONCESTREAM_IMAGE_JDK if set, else the newest
#           JDK of version 25 or later under /usr/lib/jvm, else the JDK of `java` on the PATH
#
# Settings (environment): IMAGES_DIR=$ONCESTREAM_LOCAL_DIR/images, ONCESTREAM_IMAGE_JDK
SERVICE=images
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

out=${IMAGES_DIR:-$ONCESTREAM_LOCAL_DIR/images}
work="$out/work"
here="$ONCESTREAM_REPO/deploy/local/images"
pause_image=localhost/oncestream/pause:1
# What a public JRE image has and the application uses (jdk.httpserver: the worker's HTTP endpoints).
jre_modules=java.se,jdk.httpserver,jdk.unsupported,jdk.crypto.ec,jdk.crypto.cryptoki,jdk.management,jdk.zipfs,jdk.naming.dns,jdk.net,jdk.jfr,jdk.jcmd,jdk.attach,jdk.localedata

buildah_() {
  buildah --root "$work/storage" --runroot "$work/run" --storage-driver overlay "$@"
}

project_version() {
  sed -n 's:^  <version>\(.*\)</version>:\1:p' "$ONCESTREAM_REPO/pom.xml" | head -1
}

product_image() { echo "docker.io/oncestream/oncestream:$(project_version)"; }

# save IMAGE FILE: write IMAGE from buildah's store as a docker archive that keeps its name.
save() {
  rm -f "$2.tmp"
  buildah_ push -q "$1" "docker-archive:$2.tmp:$1" >/dev/null || die "could not write $1 to $2"
  mv "$2.tmp" "$2"
}

build_pause() {
  [ -f "$out/pause.tar" ] && [ "$out/pause.tar" -nt "$here/pause.c" ] && return 0
  command -v gcc >/dev/null 2>&1 || die "gcc is not on PATH (apt-get install gcc libc6-dev)"
  log "building $pause_image"
  mkdir -p "$work/pause-root"
  gcc -static -O2 -o "$work/pause-root/pause" "$here/pause.c" || die "compiling pause.c failed"
  local c
  c=$(buildah_ from scratch)
  buildah_ copy "$c" "$work/pause-root/pause" /pause >/dev/null
  buildah_ config --entrypoint '["/pause"]' --user 65535:65535 "$c"
  buildah_ commit -q "$c" "$pause_image" >/dev/null
  buildah_ rm "$c" >/dev/null
  save "$pause_image" "$out/pause.tar"
}

# The feature version of the JDK at $1 (25 for 25.0.3), from its release file.
java_major() { sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" 2>/dev/null; }

# The JDK the runtime is made from (the base is rebuilt when it, or its version, changes).
image_jdk() {
  if [ -n "${ONCESTREAM_IMAGE_JDK:-}" ]; then
    echo "$ONCESTREAM_IMAGE_JDK"
    return 0
  fi
  local d major best="" best_major=0
  for d in /usr/lib/jvm/*/; do
    d=${d%/}
    [ -L "$d" ] && continue # Debian's java-1.17.0-openjdk-amd64 style aliases
    [ -x "$d/bin/jlink" ] || continue
    major=$(java_major "$d")
    if [ -n "$major" ] && [ "$major" -ge 25 ] && [ "$major" -gt "$best_major" ]; then
      best=$d
      best_major=$major
    fi
  done
  if [ -n "$best" ]; then
    echo "$best"
  else
    dirname "$(dirname "$(readlink -f "$(command -v java)")")"
  fi
}

jdk=$(image_jdk)
jdk_major=$(java_major "$jdk")
base_image=localhost/oncestream/jre-base:${jdk_major:-unknown}
# The Dockerfile's JDK_JAVA_OPTIONS (kept as it says on Java 24 and later) do not exist before
# Java 24: an older runtime is built with them cleared, as the Dockerfile's comment tells users.
image_build_args=()
[ "${jdk_major:-0}" -ge 24 ] || image_build_args=(--build-arg "JDK_JAVA_OPTIONS=")

build_base() {
  local stamp
  stamp="$jdk $("$jdk/bin/java" -version 2>&1 | head -1) $jre_modules cds"
  if buildah_ inspect "$base_image" >/dev/null 2>&1 && [ "$(cat "$work/jre-base.stamp" 2>/dev/null)" = "$stamp" ]; then
    return 0
  fi
  [ -x "$jdk/bin/jlink" ] || die "$jdk has no jlink (apt-get install openjdk-17-jdk-headless, or set ONCESTREAM_IMAGE_JDK to a JDK home)"
  [ "${jdk_major:-0}" -ge 25 ] \
    || log "no JDK 25 or later under /usr/lib/jvm: the local runtime is Java ${jdk_major:-?} from $jdk (the public Dockerfile's base is Java 25)"
  log "building $base_image from $jdk (jlink)"
  local root="$work/jre-root"
  rm -rf "$root"
  mkdir -p "$root/opt/java" "$root/etc" "$root/tmp" "$root/deployments"
  chmod 1777 "$root/tmp"
  # With the JDK's class-data-sharing archive, as the public JRE images have it (faster JVM starts).
  "$jdk/bin/jlink" --output "$root/opt/java/openjdk" --strip-debug --no-man-pages --no-header-files \
    --generate-cds-archive --add-modules "$jre_modules" \
    || die "jlink failed"
  # The system libraries the runtime links, at the same paths (with the dynamic loader).
  local lib
  find "$root/opt/java/openjdk" -type f \( -name '*.so' -o -perm -u+x \) -print0 \
    | xargs -0 ldd 2>/dev/null | awk '/=> \// {print $3} /^\t\/lib/ {print $1}' | sort -u \
    | while read -r lib; do
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
      done
  [ -e /lib64/ld-linux-x86-64.so.2 ] && { mkdir -p "$root/lib64"; cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"; }
  printf 'root:x:0:0:root:/root:/sbin/nologin\noncestream:x:10001:10001:oncestream:/deployments:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' > "$root/etc/passwd"
  printf 'root:x:0:\noncestream:x:10001:\nnobody:x:65534:\n' > "$root/etc/group"
  local c
  c=$(buildah_ from scratch)
  buildah_ copy "$c" "$root" / >/dev/null
  buildah_ config --env JAVA_HOME=/opt/java/openjdk --env PATH=/opt/java/openjdk/bin:/usr/bin:/bin "$c"
  buildah_ commit -q "$c" "$base_image" >/dev/null
  buildah_ rm "$c" >/dev/null
  echo "$stamp" > "$work/jre-base.stamp"
}

build_product() {
  local app="$ONCESTREAM_REPO/target/quarkus-app/quarkus-run.jar" image
  [ -f "$app" ] || die "no $app: build the project first (mvn package -DskipTests)"
  image=$(product_image)
  if [ -f "$out/oncestream.tar" ] && [ -z "$(find "$ONCESTREAM_REPO/target/quarkus-app" "$ONCESTREAM_REPO/src/main/docker/Dockerfile" \
      "$work/jre-base.stamp" -newer "$out/oncestream.tar" -print -quit)" ]; then
    return 0
  fi
  log "building $image from src/main/docker/Dockerfile (base $base_image)"
  buildah_ bud -q --layers=false --pull=false --build-arg "BASE_IMAGE=$base_image" \
    ${image_build_args[@]+"${image_build_args[@]}"} \
    -f "$ONCESTREAM_REPO/src/main/docker/Dockerfile" -t "$image" "$ONCESTREAM_REPO" >/dev/null \
    || die "buildah bud failed"
  save "$image" "$out/oncestream.tar"
  # Old layers of earlier builds are not kept.
  buildah_ rmi --prune >/dev/null 2>&1 || true
}

build() {
  command -v buildah >/dev/null 2>&1 || die "buildah is not on PATH (apt-get install buildah)"
  mkdir -p "$out" "$work"
  local start=$SECONDS
  build_pause
  build_base
  build_product
  log "images ready in $out after $((SECONDS - start)) s"
  if [ "${1:-}" = "--load" ]; then
    "$ONCESTREAM_REPO/deploy/local/node.sh" load
  fi
}

case "${1:-}" in
  build) shift; build "$@" ;;
  list) ls -l "$out"/*.tar 2>/dev/null; echo "product image: $(product_image)" ;;
  clean) rm -rf "$out"; log "removed $out" ;;
  jdk) echo "$jdk" ;;
  *) echo "usage: $0 build [--load] | list | clean | jdk" >&2; exit 2 ;;
esac
