package io.oncestream.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A part of a committed document that is generated: the text between two marker lines must
 * equal what a test generates. The generated text is also written under target/, so that a
 * failing check says which file to paste.
 */
public final class GeneratedSection {

    private GeneratedSection() {
    }

    /** Asserts that {@code document} (relative to the repository) holds {@code expected} between the markers. */
    public static void assertCurrent(String document, String startMarker, String endMarker, String expected, String targetName)
            throws IOException {
        Path repo = LocalService.repoDir();
        Path written = repo.resolve("target").resolve(targetName);
        Files.createDirectories(written.getParent());
        Files.writeString(written, expected);
        String text = Files.readString(repo.resolve(document));
        int start = text.indexOf(startMarker);
        int end = text.indexOf(endMarker);
        assertThat(start).as(document + " has the marker " + startMarker).isNotNegative();
        assertThat(end).as(document + " has the marker " + endMarker + " after the first").isGreaterThan(start);
        assertThat(text.substring(start + startMarker.length(), end).strip())
                .as(document + "'s generated part is out of date: replace it with target/" + targetName)
                .isEqualTo(expected.strip());
    }
}
