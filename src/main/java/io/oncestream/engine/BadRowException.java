package io.oncestream.engine;

/** A row that cannot be written as mapped: the record is bad, not the sink. */
public class BadRowException extends Exception {

    public BadRowException(String message) {
        super(message);
    }
}
