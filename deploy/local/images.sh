#!/usr/bin/env bash
# Builds the images the local node runs, without any registry, and writes them as archives
# that node.sh loads into containerd:
#   pause.tar       localhost/oncestream/pause:1 — the pod sandbox (images/pause.c, static)
#   (no archive)    localhost/oncestream/jre-base:17 — a Java runtime made with jlink from this
#                   machine's JDK, with the system libraries it links (the stand-in for the
#                   public JRE base that src/main/docker/Dockerfile uses by default)
#   oncestream.tar  docker.io/oncestream/oncestream:<version> — src/main/docker/Dockerfile,
#                   the file users build, built by buildah on that base
#
# Usage: images.sh build [--load] | list | clean
#   build   build what is missing or out of date (the product image after every `mvn package`);
#           --load also imports the archives into the running node
#
# Settings (environment): IMAGES_DIR=$ONCESTREAM_LOCAL_DIR/images
SERVICE=images
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

out=${IMAGES_DIR:-$ONCESTREAM_LOCAL_DIR/images}
work="$out/work"
here="$ONCESTREAM_REPO/deploy/local/images"
pause_image=localhost/oncestream/pause:1
base_image=localhost/oncestream/jre-base:17
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

# The JDK that runs this script's `java`, and its version (the base is rebuilt if it changes).
jdk_home() { dirname "$(dirname "$(readlink -f "$(command -v java)")")"; }

build_base() {
  local jdk stamp
  jdk=$(jdk_home)
  stamp="$jdk $(java -version 2>&1 | head -1) $jre_modules"
  if buildah_ inspect "$base_image" >/dev/null 2>&1 && [ "$(cat "$work/jre-base.stamp" 2>/dev/null)" = "$stamp" ]; then
    return 0
  fi
  [ -x "$jdk/bin/jlink" ] && [ -d "$jdk/jmods" ] || die "$jdk has no jlink or jmods (apt-get install openjdk-17-jdk-headless)"
  log "building $base_image from $jdk (jlink)"
  local root="$work/jre-root"
  rm -rf "$root"
  mkdir -p "$root/opt/java" "$root/etc" "$root/tmp" "$root/deployments"
  chmod 1777 "$root/tmp"
  "$jdk/bin/jlink" --output "$root/opt/java/openjdk" --strip-debug --no-man-pages --no-header-files \
    --add-modules "$jre_modules" \
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
      -newer "$out/oncestream.tar" -print -quit)" ]; then
    return 0
  fi
  log "building $image from src/main/docker/Dockerfile (base $base_image)"
  buildah_ bud -q --layers=false --pull=false --build-arg "BASE_IMAGE=$base_image" \
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
  *) echo "usage: $0 build [--load] | list | clean" >&2; exit 2 ;;
esac
