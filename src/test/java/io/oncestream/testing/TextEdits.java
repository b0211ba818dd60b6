package io.oncestream.testing;

import java.util.Map;

/** Text edits of test manifests and configurations: every edit must apply, or the test proves nothing. */
public final class TextEdits {

    private TextEdits() {
    }

    /** {@code text} with each key of {@code edits} replaced by its value; fails naming an edit whose key does not occur. */
    public static String apply(String text, Map<String, String> edits) {
        String out = text;
        for (Map.Entry<String, String> e : edits.entrySet()) {
            if (!out.contains(e.getKey())) {
                throw new AssertionError("the edit of \"" + e.getKey() + "\" does not apply to:\n" + out);
            }
            out = out.replace(e.getKey(), e.getValue());
        }
        return out;
    }
}
