package io.oncestream.operator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;

import io.oncestream.testing.Command;
import io.oncestream.testing.LocalService;

/**
 * The Argo CD health check of docs/gitops.md (its one {@code lua} block), run with Lua 5.4 on
 * a resource as Argo CD runs it: the resource as the global {@code obj}, the script's result
 * read from the table it returns.
 */
final class ArgoHealthCheck {

    record Health(String status, String message) {
    }

    private final String script;

    private ArgoHealthCheck(String script) {
        this.script = script;
    }

    static ArgoHealthCheck fromDocs() {
        try {
            String doc = Files.readString(LocalService.repoDir().resolve("docs/gitops.md"));
            int start = doc.indexOf("```lua\n");
            int end = doc.indexOf("```", start + 7);
            if (start < 0 || end < 0 || doc.indexOf("```lua\n", end) >= 0) {
                throw new IllegalStateException("docs/gitops.md must hold exactly one ```lua block");
            }
            return new ArgoHealthCheck(doc.substring(start + 7, end));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Health evaluate(JsonNode resource, Path workDir) {
        String program = "obj = " + lua(resource) + "\nlocal function health()\n" + script + "\nend\n"
                + "local hs = health()\nio.write(tostring(hs.status), \"\\n\", tostring(hs.message))\n";
        try {
            Path file = Files.createTempFile(workDir, "health", ".lua");
            Files.writeString(file, program);
            Command.Result result = Command.of("lua5.4", file.toString()).run(Duration.ofSeconds(30));
            if (result.exitCode() != 0) {
                throw new IllegalStateException("lua5.4 failed: " + result.stderr());
            }
            List<String> lines = result.stdout().lines().toList();
            return new Health(lines.get(0), lines.size() > 1 ? lines.get(1) : "");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A Lua table constructor for a JSON value (null members are left out, as nil). */
    static String lua(JsonNode node) {
        if (node.isObject()) {
            StringBuilder b = new StringBuilder("{");
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> e = it.next();
                if (!e.getValue().isNull()) {
                    b.append('[').append(quote(e.getKey())).append("]=").append(lua(e.getValue())).append(',');
                }
            }
            return b.append('}').toString();
        }
        if (node.isArray()) {
            StringBuilder b = new StringBuilder("{");
            node.forEach(v -> b.append(lua(v)).append(','));
            return b.append('}').toString();
        }
        if (node.isNumber() || node.isBoolean()) {
            return node.asText();
        }
        return node.isNull() ? "nil" : quote(node.asText());
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\%03d", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
