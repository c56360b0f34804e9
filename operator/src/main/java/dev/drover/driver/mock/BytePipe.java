package dev.drover.driver.mock;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A bounded in-memory pipe: what is written to {@link #out()} is read from {@link #in()}, any thread on either side.
 * A writer waits while {@link #CAPACITY} bytes are unread; the reader sees the end once the writing side is closed
 * and all is read. Closing the reading side makes every write fail, as a broken pipe does. Unlike {@code
 * PipedInputStream}, it does not care which threads write and whether they are still alive.
 */
final class BytePipe {

    static final int CAPACITY = 64 * 1024;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final byte[] ring = new byte[CAPACITY];
    private int head;
    private int size;
    private boolean writerClosed;
    private boolean readerClosed;

    private final OutputStream out = new OutputStream() {
        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            java.util.Objects.checkFromIndexSize(off, len, b.length);
            lock.lock();
            try {
                while (len > 0) {
                    if (writerClosed || readerClosed) {
                        throw new IOException(
                                writerClosed ? "stream closed" : "broken pipe: the reading side is closed");
                    }
                    if (size == CAPACITY) {
                        changed.await();
                        continue;
                    }
                    int n = Math.min(len, CAPACITY - size);
                    for (int i = 0; i < n; i++) {
                        ring[(head + size + i) % CAPACITY] = b[off + i];
                    }
                    size += n;
                    off += n;
                    len -= n;
                    changed.signalAll();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while writing");
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void close() {
            closeWriting();
        }
    };

    private final InputStream in = new InputStream() {
        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            java.util.Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                return 0;
            }
            lock.lock();
            try {
                while (size == 0) {
                    if (writerClosed || readerClosed) {
                        return -1;
                    }
                    changed.await();
                }
                int n = Math.min(len, size);
                for (int i = 0; i < n; i++) {
                    b[off + i] = ring[(head + i) % CAPACITY];
                }
                head = (head + n) % CAPACITY;
                size -= n;
                changed.signalAll();
                return n;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while reading");
            } finally {
                lock.unlock();
            }
        }

        @Override
        public int available() {
            lock.lock();
            try {
                return size;
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void close() {
            closeReading();
        }
    };

    /** Closes the writing side: the reader sees the end once all is read. */
    void closeWriting() {
        lock.lock();
        try {
            writerClosed = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Closes the reading side: what is unread is dropped, and every write fails. */
    void closeReading() {
        lock.lock();
        try {
            readerClosed = true;
            size = 0;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    OutputStream out() {
        return out;
    }

    InputStream in() {
        return in;
    }
}
