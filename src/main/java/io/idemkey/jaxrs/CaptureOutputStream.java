package io.idemkey.jaxrs;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;

/**
 * Holds back an entity's bytes so that its record is completed before the client sees any of them.
 * Bounded: past {@code limit} bytes it gives up capturing, writes what it held to the real stream
 * and passes everything after straight through.
 */
final class CaptureOutputStream extends OutputStream {

    private final OutputStream target;
    private final int limit;
    private ByteArrayOutputStream buffer = new ByteArrayOutputStream(512);

    CaptureOutputStream(OutputStream target, int limit) {
        this.target = target;
        this.limit = limit;
    }

    /** Whether the entity outgrew the limit and was streamed instead of captured. */
    boolean overflowed() {
        return buffer == null;
    }

    /** The captured bytes (only when not {@link #overflowed()}). */
    byte[] captured() {
        return buffer.toByteArray();
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[]{(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] bytes, int offset, int length) throws IOException {
        if (buffer != null && buffer.size() + length > limit) {
            buffer.writeTo(target);
            buffer = null;
        }
        if (buffer != null) {
            buffer.write(bytes, offset, length);
        } else {
            target.write(bytes, offset, length);
        }
    }

    /** Flushing while capturing would commit the response before its record: held until the end. */
    @Override
    public void flush() throws IOException {
        if (buffer == null) {
            target.flush();
        }
    }

    /** The container closes the real stream; a writer closing this one must not commit it early. */
    @Override
    public void close() {
    }
}
