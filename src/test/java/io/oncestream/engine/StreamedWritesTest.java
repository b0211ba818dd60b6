package io.oncestream.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.oncestream.engine.transform.SourceRecord;

/**
 * How a batch's writes go out while it is read: who sends them, in which calls, and what a
 * failure on either side does. The sink here records each call and can hold a call until the
 * test lets it go, so every interleaving below is forced, not hoped for.
 */
@Timeout(30)
class StreamedWritesTest {

    private record Numbered(int n) implements RowSink.Write {
    }

    /** Records each {@link #writeAll} call's writes and thread; holds calls while {@link #hold} is closed. */
    private static final class RecordingSink implements RowSink {
        final List<List<Integer>> calls = Collections.synchronizedList(new ArrayList<>());
        final List<String> threads = Collections.synchronizedList(new ArrayList<>());
        volatile CountDownLatch hold = new CountDownLatch(0);
        final CountDownLatch firstCallStarted = new CountDownLatch(1);
        volatile RuntimeException failWith;

        @Override
        public void writeAll(List<Write> writes, SinkListener listener) {
            threads.add(Thread.currentThread().getName());
            firstCallStarted.countDown();
            try {
                hold.await();
            } catch (InterruptedException e) {
                throw new StopRequestedException();
            }
            if (failWith != null) {
                throw failWith;
            }
            calls.add(writes.stream().map(w -> ((Numbered) w).n()).toList());
            listener.acknowledged(writes.size());
        }

        List<Integer> written() {
            List<Integer> all = new ArrayList<>();
            synchronized (calls) {
                calls.forEach(all::addAll);
            }
            return all;
        }

        @Override
        public Write prepare(SourceRecord origin, Map<String, Object> columns, long ts) {
            throw new UnsupportedOperationException();
        }

        @Override
        public List<String> primaryKeyColumns() {
            return List.of();
        }

        @Override
        public Write prepareDelete(SourceRecord origin, Map<String, Object> key, long ts) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Write prepareDeadLetter(SourceRecord record, String error, long batchId, long ts) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close() {
        }
    }

    /** Counts acknowledgements and the sizes announced before each call. */
    private static final class Counting implements StreamedWrites.Listener {
        final List<Integer> sending = Collections.synchronizedList(new ArrayList<>());
        volatile long acknowledged;

        @Override
        public void sending(int writes) {
            sending.add(writes);
        }

        @Override
        public synchronized void acknowledged(int count) {
            acknowledged += count;
        }

        @Override
        public void waitingForSink(Throwable cause, int pendingWrites) {
        }

        @Override
        public void sinkAvailable() {
        }
    }

    private final RecordingSink sink = new RecordingSink();
    private final Counting listener = new Counting();

    private void add(StreamedWrites writes, int from, int to) {
        for (int i = from; i < to; i++) {
            writes.add(new Numbered(i));
        }
    }

    private static List<Integer> range(int from, int to) {
        List<Integer> out = new ArrayList<>();
        for (int i = from; i < to; i++) {
            out.add(i);
        }
        return out;
    }

    @Test
    void aBatchSmallerThanTheFirstWriteIsSentOnceReadByTheReadingThread() {
        StreamedWrites writes = new StreamedWrites(sink, listener, 100, "writer-test");
        add(writes, 0, 99);
        assertThat(sink.calls).as("nothing sent while read").isEmpty();

        writes.finish();

        assertThat(sink.calls).containsExactly(range(0, 99));
        assertThat(sink.threads).containsExactly(Thread.currentThread().getName());
        assertThat(listener.sending).containsExactly(99);
        assertThat(listener.acknowledged).isEqualTo(99);
        assertThat(writes.size()).isEqualTo(99);
    }

    @Test
    void writesGoOutWhileTheBatchIsStillReadAndWhatAccumulatesMeanwhileGoesInOneCall() throws Exception {
        sink.hold = new CountDownLatch(1);
        StreamedWrites writes = new StreamedWrites(sink, listener, 10, "writer-test");
        add(writes, 0, 10);
        assertThat(sink.firstCallStarted.await(10, TimeUnit.SECONDS)).as("the first call started before the read ended").isTrue();
        // The first call is held: the next 1,000 writes accumulate, and go out as one call once it returns.
        add(writes, 10, 1010);
        sink.hold.countDown();
        add(writes, 1010, 1020);

        writes.finish();

        assertThat(sink.threads).allMatch("writer-test"::equals);
        assertThat(sink.calls.get(0)).isEqualTo(range(0, 10));
        assertThat(sink.calls.get(1)).as("everything handed over while the first call was held")
                .containsSequence(range(10, 1010).subList(0, 768));
        assertThat(sink.written()).as("every write once, in order").isEqualTo(range(0, 1020));
        assertThat(listener.acknowledged).as("finish returned after every acknowledgement").isEqualTo(1020);
        assertThat(listener.sending.stream().mapToInt(Integer::intValue).sum()).isEqualTo(1020);
    }

    @Test
    void finishReturnsOnlyOnceTheWriterHadEveryWriteAcknowledged() throws Exception {
        sink.hold = new CountDownLatch(1);
        StreamedWrites writes = new StreamedWrites(sink, listener, 10, "writer-test");
        add(writes, 0, 300);
        assertThat(sink.firstCallStarted.await(10, TimeUnit.SECONDS)).isTrue();
        CountDownLatch finished = new CountDownLatch(1);
        Thread reader = new Thread(() -> {
            writes.finish();
            finished.countDown();
        });
        reader.start();

        assertThat(finished.await(300, TimeUnit.MILLISECONDS)).as("finish returned while a call was held").isFalse();
        sink.hold.countDown();
        assertThat(finished.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(listener.acknowledged).isEqualTo(300);
        assertThat(sink.written()).isEqualTo(range(0, 300));
        reader.join();
    }

    @Test
    void aFailureOfTheWriterIsRethrownToTheReadingThread() throws Exception {
        SinkException refused = new SinkException("refused", null);
        sink.failWith = refused;
        StreamedWrites writes = new StreamedWrites(sink, listener, 5, "writer-test");
        add(writes, 0, 5);
        assertThat(sink.firstCallStarted.await(10, TimeUnit.SECONDS)).isTrue();

        assertThatThrownBy(() -> {
            for (int i = 5; i < 100_000; i++) {
                writes.add(new Numbered(i));
                Thread.sleep(0, 1000);
            }
            writes.finish();
        }).isSameAs(refused);
        assertThat(sink.calls).as("nothing written after the failure").isEmpty();
    }

    @Test
    void aFailureOfTheWriterIsRethrownByFinish() throws Exception {
        SinkException refused = new SinkException("refused", null);
        sink.failWith = refused;
        sink.hold = new CountDownLatch(1);
        StreamedWrites writes = new StreamedWrites(sink, listener, 5, "writer-test");
        add(writes, 0, 5);
        assertThat(sink.firstCallStarted.await(10, TimeUnit.SECONDS)).isTrue();
        sink.hold.countDown();

        assertThatThrownBy(writes::finish).isSameAs(refused);
    }

    @Test
    void abandonWaitsForTheCallInFlightAndSendsNothingMore() throws Exception {
        sink.hold = new CountDownLatch(1);
        StreamedWrites writes = new StreamedWrites(sink, listener, 5, "writer-test");
        add(writes, 0, 5);
        assertThat(sink.firstCallStarted.await(10, TimeUnit.SECONDS)).isTrue();
        add(writes, 5, 600);
        Thread release = new Thread(() -> {
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            sink.hold.countDown();
        });
        release.start();

        writes.abandon();

        assertThat(sink.hold.getCount()).as("abandon returned only once the call in flight ended").isZero();
        assertThat(sink.calls).containsExactly(range(0, 5));
        Thread.sleep(100);
        assertThat(sink.calls).as("what was handed over but not sent stays unsent").hasSize(1);
        release.join();
    }
}
