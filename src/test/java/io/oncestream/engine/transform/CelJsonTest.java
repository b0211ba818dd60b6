package io.oncestream.engine.transform;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;

/** Decimal numbers in a record's JSON decode to exactly the double the JDK's own parser gives. */
class CelJsonTest {

    @Test
    void decimalsAreTheJdksDoubles() throws Exception {
        List<String> numbers = new ArrayList<>(List.of("0.1", "150.5", "-0.0", "1e23", "8.41e21", "2.2250738585072011e-308",
                "2.2250738585072012e-308", "4.9e-324", "2.4703282292062328e-324", "1.7976931348623157e308",
                "1.7976931348623158e308", "9007199254740993.0", "0.30000000000000004", "123456789012345678901234567890.5",
                "1.00000000000000011102230246251565404236316680908203125", "7.3177701707893310e+15"));
        Random random = new Random(11);
        for (int i = 0; i < 20_000; i++) {
            double d = Double.longBitsToDouble(random.nextLong());
            if (Double.isFinite(d)) {
                numbers.add(Double.toString(d));
                numbers.add(String.format("%.17e", d).replace(",", "."));
            }
            numbers.add(random.nextInt(10_000_000) / 100.0 + "");
        }
        for (String number : numbers) {
            Object decoded = ((Map<?, ?>) CelJson.parse(("{\"amount\": " + number + "}").getBytes(StandardCharsets.UTF_8)))
                    .get("amount");
            assertThat(decoded).as(number).isEqualTo(Double.parseDouble(number));
        }
    }
}
