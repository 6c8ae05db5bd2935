package io.idemkey.it.app;

/** A deterministic business failure, mapped to 402 by {@link BusinessExceptionMapper}. */
public class BusinessException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public BusinessException(String message) {
        super(message);
    }
}
