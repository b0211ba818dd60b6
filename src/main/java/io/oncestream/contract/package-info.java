/**
 * What the operator and the worker agree on across a process boundary, and nothing else: the
 * states a worker reports in {@code GET /progress}. A leaf: it depends on no other Oncestream
 * package, so both sides can use it without reaching into the other.
 */
package io.oncestream.contract;
