package io.mesh.wire;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The JSON of every znode and of the HTTP API: one line of UTF-8, times as ISO-8601 UTC strings
 * ({@code 2026-11-30T03:30:00.123Z}).
 */
public final class Json {
    /** The shared mapper: tolerant of unknown fields when reading (newer writers), ISO-8601 times. */
    public static final ObjectMapper MAPPER = JsonMapper.builder()
            .addModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(DeserializationFeature.ADJUST_DATES_TO_CONTEXT_TIME_ZONE)
            .enable(DeserializationFeature.READ_UNKNOWN_ENUM_VALUES_USING_DEFAULT_VALUE) // WireName
            .build();

    private Json() {}

    /**
     * @param value any record of this package
     * @return one line of UTF-8 JSON
     */
    public static byte[] bytes(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise " + value.getClass().getSimpleName(), e);
        }
    }

    /** @return the value as one line of JSON text */
    public static String text(Object value) { return new String(bytes(value), StandardCharsets.UTF_8); }

    /**
     * @param data a znode's data
     * @param type the record type
     * @return the record
     * @throws UncheckedIOException when the data is not JSON of that shape
     */
    public static <T> T read(byte[] data, Class<T> type) {
        try {
            return MAPPER.readValue(data, type);
        } catch (IOException e) {
            throw new UncheckedIOException("znode data is not a " + type.getSimpleName() + ": " + e.getMessage(), e);
        }
    }

    /**
     * @param data a znode's data, or {@code null}
     * @param type the record type
     * @return the record; {@code null} when the data is missing, empty or not JSON of that shape
     */
    public static <T> T readOrNull(byte[] data, Class<T> type) {
        if (data == null || data.length == 0) return null;
        try {
            return read(data, type);
        } catch (RuntimeException e) {
            return null;
        }
    }
}
