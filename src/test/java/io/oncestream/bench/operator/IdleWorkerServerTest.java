package io.oncestream.bench.operator;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

/**
 * The idle workers' addresses: spread over the processes by job number, each process's in its
 * own 127.(1 + p).0.0/16 (the range deploy/local/operator-benchmark.sh sends to its port), and
 * each address naming one job again.
 */
class IdleWorkerServerTest {

    @Test
    void everyJobHasItsOwnAddressInItsProcesssRangeAndIsFoundFromIt() {
        for (int processes = 1; processes <= 3; processes++) {
            Set<String> seen = new HashSet<>();
            for (int index = 0; index < 12_000; index++) {
                String address = IdleWorkerServer.address(index, processes);
                assertThat(address).startsWith("127." + (1 + index % processes) + ".");
                assertThat(IdleWorkerServer.index(address, processes)).isEqualTo(index);
                assertThat(seen.add(address)).as("a second job at " + address).isTrue();
            }
        }
        assertThat(IdleWorkerServer.address(4000, 1)).as("one process: the addresses of earlier runs").isEqualTo("127.1.15.160");
    }
}
