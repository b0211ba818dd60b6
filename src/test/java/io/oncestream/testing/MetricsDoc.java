package io.oncestream.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * docs/metrics.md against a live scrape: every {@code oncestream_*} family in the scrape is in
 * the doc's table with its type and label names, and every family of the table is scraped.
 */
public final class MetricsDoc {

    private static final Pattern TYPE = Pattern.compile("^# TYPE (\\S+) (\\S+)$", Pattern.MULTILINE);
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)\\})? .*$", Pattern.MULTILINE);
    private static final Pattern ROW = Pattern.compile("^\\| `([a-z0-9_]+)` \\| (\\w+) \\|([^|]*)\\|", Pattern.MULTILINE);

    private MetricsDoc() {
    }

    /** One family: its type and the names of its samples' labels. */
    record Family(String type, Set<String> labels) {
    }

    /** Checks the table between {@code <!-- <section> metrics ...} and its end against {@code scrape}. */
    public static void check(String section, String scrape) {
        assertThat(scraped(scrape)).as("docs/metrics.md, %s metrics, against a live scrape", section).isEqualTo(documented(section));
    }

    static Map<String, Family> documented(String section) {
        String doc;
        try {
            doc = Files.readString(Path.of("docs/metrics.md"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int start = doc.indexOf("<!-- " + section + " metrics");
        int end = doc.indexOf("<!-- end of " + section + " metrics -->");
        assertThat(start).as("section %s in docs/metrics.md", section).isNotNegative();
        Map<String, Family> out = new TreeMap<>();
        Matcher m = ROW.matcher(doc.substring(start, end));
        while (m.find()) {
            Set<String> labels = Arrays.stream(m.group(3).split(",")).map(s -> s.strip().replace("`", ""))
                    .filter(s -> !s.isEmpty()).collect(Collectors.toCollection(TreeSet::new));
            out.put(m.group(1), new Family(m.group(2), labels));
        }
        return out;
    }

    static Map<String, Family> scraped(String scrape) {
        Map<String, String> types = new TreeMap<>();
        Matcher t = TYPE.matcher(scrape);
        while (t.find()) {
            String name = t.group(1);
            if (name.startsWith("oncestream_")) {
                types.put("counter".equals(t.group(2)) && !name.endsWith("_total") ? name + "_total" : name, t.group(2));
            }
        }
        Map<String, Set<String>> labels = new TreeMap<>();
        Matcher s = SAMPLE.matcher(scrape);
        while (s.find()) {
            String family = family(s.group(1), types);
            if (family == null) {
                continue;
            }
            Set<String> names = labels.computeIfAbsent(family, k -> new TreeSet<>());
            if (s.group(3) != null) {
                for (String pair : s.group(3).split(",(?=[a-zA-Z_]+=\")")) {
                    if (!pair.isBlank()) {
                        names.add(pair.substring(0, pair.indexOf('=')).strip());
                    }
                }
            }
        }
        Map<String, Family> out = new TreeMap<>();
        types.forEach((name, type) -> out.put(name, new Family(type, labels.getOrDefault(name, new TreeSet<>()))));
        return out;
    }

    private static String family(String sample, Map<String, String> types) {
        if (types.containsKey(sample)) {
            return sample;
        }
        for (String suffix : new String[] {"_bucket", "_sum", "_count", "_created"}) {
            if (sample.endsWith(suffix) && "histogram".equals(types.get(sample.substring(0, sample.length() - suffix.length())))) {
                return sample.substring(0, sample.length() - suffix.length());
            }
        }
        return null;
    }
}
