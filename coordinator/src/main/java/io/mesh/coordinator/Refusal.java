package io.mesh.coordinator;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A request the coordinator refuses, nothing written: the HTTP status, the field at fault (or none) and a message that
 * names it and the fix. Every store throws it; {@link HttpApi} answers it in one place, as
 * {@code {"error": message, "field": field}}, {@code field} left out when there is none: the {@code Error} and
 * {@code FieldError} schemas of {@code openapi.json} (docs/reference/http.md).
 */
public final class Refusal extends RuntimeException {
    /** The HTTP status: 400, 404 or 409. */
    private final int status;
    /** The request field at fault, such as {@code module} or {@code to}; {@code null} for none. */
    private final String field;

    /**
     * @param status  the HTTP status
     * @param field   the field at fault, or {@code null}
     * @param message what is wrong and the fix
     */
    public Refusal(int status, String field, String message) {
        super(message, null, false, false);
        this.status = status;
        this.field = field;
    }

    /** @return a 400: the request does not fit */
    public static Refusal badRequest(String field, String message) { return new Refusal(400, field, message); }

    /** @return a 404: what the request names is not there */
    public static Refusal notFound(String field, String message) { return new Refusal(404, field, message); }

    /** @return a 409: the state of what it names does not allow it now */
    public static Refusal conflict(String field, String message) { return new Refusal(409, field, message); }

    /** @return the HTTP status */
    public int status() { return status; }

    /** @return the field at fault, or {@code null} */
    public String field() { return field; }

    /** @return the answer's body: {@code {"error"}}, with {@code "field"} when there is one */
    public Map<String, Object> body() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("error", getMessage());
        if (field != null) out.put("field", field);
        return out;
    }
}
