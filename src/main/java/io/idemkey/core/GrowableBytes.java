package io.idemkey.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The canonical encoding's output: a growable byte array without ByteArrayOutputStream's per-byte
 * locking, with big-endian lengths and longs. Its fields are read in place by the encoder and the
 * readers (member names are compared where they were written).
 */
final class GrowableBytes {
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    byte[] array;
    int size;

    GrowableBytes(int capacity) {
        array = new byte[capacity];
    }

    /** Room for {@code more} bytes; small enough for the JIT to inline at every call (growing is apart). */
    private void ensure(int more) {
        if (size + more > array.length) {
            grow(more);
        }
    }

    private void grow(int more) {
        array = Arrays.copyOf(array, Math.max(array.length * 2, size + more));
    }

    void write(int b) {
        ensure(1);
        array[size++] = (byte) b;
    }

    void writeInt(int value) {
        ensure(4);
        setLength(size, value);
        size += 4;
    }

    void writeLong(long value) {
        ensure(8);
        LONG.set(array, size, value);
        size += 8;
    }

    static int readInt(byte[] array, int at) {
        return (int) INT.get(array, at);
    }

    /** Room for a length written later with {@link #setLength}; returns where it goes. */
    int reserveLength() {
        ensure(4);
        size += 4;
        return size - 4;
    }

    void setLength(int at, int length) {
        INT.set(array, at, length);
    }

    /** Length and bytes of an ASCII string without encoding it first; false (nothing written) if it is not ASCII. */
    boolean writeAscii(String value) {
        int length = value.length();
        ensure(length + 4);
        int at = size + 4;
        for (int i = 0; i < length; i++) {
            char c = value.charAt(i);
            if (c >= 0x80) {
                return false;
            }
            array[at++] = (byte) c;
        }
        setLength(size, length);
        size = at;
        return true;
    }

    void write(byte[] bytes) {
        ensure(bytes.length);
        System.arraycopy(bytes, 0, array, size, bytes.length);
        size += bytes.length;
    }

    void write(byte[] bytes, int from, int length) {
        ensure(length);
        System.arraycopy(bytes, from, array, size, length);
        size += length;
    }
}
