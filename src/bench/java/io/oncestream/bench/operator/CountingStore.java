package io.oncestream.bench.operator;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.stream.Stream;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;

/**
 * An informer's store that keeps, per object, only whether it matches a predicate: a benchmark
 * can watch tens of thousands of objects without holding them. Nothing is read back from it
 * (no event handler needs the previous object), so {@code get} and {@code values} hold nothing.
 */
final class CountingStore<T extends HasMetadata> implements ItemStore<T> {

    private final Map<String, Boolean> matches = new ConcurrentHashMap<>();
    private final AtomicLong lastChange = new AtomicLong(System.nanoTime());
    private final AtomicLong changes = new AtomicLong();
    private final Predicate<T> counted;

    CountingStore(Predicate<T> counted) {
        this.counted = counted;
    }

    /** When an object was last added, changed or removed ({@link System#nanoTime()}). */
    long lastChange() {
        return lastChange.get();
    }

    /** Objects added, changed or removed so far. */
    long changes() {
        return changes.get();
    }

    /** Objects present that match. */
    long counted() {
        return matches.values().stream().filter(Boolean::booleanValue).count();
    }

    @Override
    public String getKey(T object) {
        return Cache.metaNamespaceKeyFunc(object);
    }

    @Override
    public T put(String key, T object) {
        matches.put(key, counted.test(object));
        lastChange.set(System.nanoTime());
        changes.incrementAndGet();
        return null;
    }

    @Override
    public T remove(String key) {
        matches.remove(key);
        lastChange.set(System.nanoTime());
        changes.incrementAndGet();
        return null;
    }

    @Override
    public Stream<String> keySet() {
        return matches.keySet().stream();
    }

    @Override
    public Stream<T> values() {
        return Stream.empty();
    }

    @Override
    public int size() {
        return matches.size();
    }

    @Override
    public T get(String key) {
        return null;
    }
}
