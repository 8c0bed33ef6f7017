package io.mesh.manifest;

import java.math.BigDecimal;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Byte amounts as compose writes them ({@code memory: 512m}): a number, optionally with a fraction, then
 * {@code b}, {@code k}, {@code m}, {@code g}, {@code t} or {@code p}, optionally followed by {@code b} or {@code ib}
 * ({@code 512mb}, {@code 1GiB}); case is ignored and every unit is a power of 1024, as in compose and Docker
 * ({@code docker/go-units RAMInBytes}). A bare number is bytes.
 */
public final class ByteSize {
    private static final Pattern FORM = Pattern.compile("(\\d{1,15}(?:\\.\\d{1,9})?)(?:([kmgtp])(?:i?b)?|b)?");

    private ByteSize() {}

    /**
     * @param text such as {@code 512m}, {@code 1.5g} or {@code 1073741824}
     * @return the number of bytes, rounded down to a whole byte
     * @throws IllegalArgumentException naming the accepted form when the text is not one, or is too large
     */
    public static long parse(String text) {
        Matcher m = text == null ? null : FORM.matcher(text.strip().toLowerCase(Locale.ROOT));
        if (m == null || !m.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a byte amount: write a number with b, k, m or g, such as 512m or 1g");
        }
        int power = m.group(2) == null ? 0 : "kmgtp".indexOf(m.group(2)) + 1;
        try {
            return new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(1024).pow(power)).toBigInteger().longValueExact();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("'" + text + "' is more bytes than a 64-bit count holds: give a smaller amount, such as 512m");
        }
    }
}
