package io.github.zarrdevelopers.jpegconformance;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON for the harness protocol: objects as LinkedHashMap, arrays as ArrayList, numbers as
 * BigDecimal (exact, so 90.0, 1e2 and 1e400 keep their value), JSON null as {@link #NULL}, so
 * that a member that is null differs from one that is absent.
 *
 * <p>A parser of its own keeps the harness free of dependencies: the JVM starts faster and the
 * row measures the JPEG library, not a JSON library's number rules.
 */
final class Json {
    /** JSON's null, as a value of a map or list. */
    static final Object NULL = new Object() {
        @Override
        public String toString() {
            return "null";
        }
    };

    private final String text;
    private int at;

    private Json(String text) {
        this.text = text;
    }

    /** The value of one JSON text; IllegalArgumentException says where it is not JSON. */
    static Object parse(String text) {
        Json p = new Json(text);
        p.space();
        Object value = p.value(0);
        p.space();
        if (p.at != text.length()) {
            throw p.error("text after the JSON value");
        }
        return value;
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException(what + " at offset " + at);
    }

    private void space() {
        while (at < text.length()) {
            char c = text.charAt(at);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            at++;
        }
    }

    private Object value(int depth) {
        if (depth > 512) {
            throw error("nesting deeper than 512");
        }
        if (at >= text.length()) {
            throw error("end of text where a value was expected");
        }
        char c = text.charAt(at);
        switch (c) {
            case '{':
                return object(depth);
            case '[':
                return array(depth);
            case '"':
                return string();
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'n':
                return literal("null", NULL);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw error("unexpected character '" + c + "'");
        }
    }

    private Object literal(String word, Object value) {
        if (!text.startsWith(word, at)) {
            throw error("unknown literal");
        }
        at += word.length();
        return value;
    }

    private Map<String, Object> object(int depth) {
        Map<String, Object> map = new LinkedHashMap<>();
        at++;
        space();
        if (at < text.length() && text.charAt(at) == '}') {
            at++;
            return map;
        }
        while (true) {
            space();
            if (at >= text.length() || text.charAt(at) != '"') {
                throw error("expected a member name");
            }
            String key = string();
            space();
            expect(':');
            space();
            map.put(key, value(depth + 1));
            space();
            if (at < text.length() && text.charAt(at) == ',') {
                at++;
                continue;
            }
            expect('}');
            return map;
        }
    }

    private List<Object> array(int depth) {
        List<Object> list = new ArrayList<>();
        at++;
        space();
        if (at < text.length() && text.charAt(at) == ']') {
            at++;
            return list;
        }
        while (true) {
            space();
            list.add(value(depth + 1));
            space();
            if (at < text.length() && text.charAt(at) == ',') {
                at++;
                continue;
            }
            expect(']');
            return list;
        }
    }

    private void expect(char c) {
        if (at >= text.length() || text.charAt(at) != c) {
            throw error("expected '" + c + "'");
        }
        at++;
    }

    private String string() {
        at++; // the opening quote
        int start = at;
        // Base64 payloads are long and have no escapes: one scan and one substring.
        while (at < text.length()) {
            char c = text.charAt(at);
            if (c == '"') {
                return text.substring(start, at++);
            }
            if (c == '\\' || c < 0x20) {
                break;
            }
            at++;
        }
        StringBuilder out = new StringBuilder(text.substring(start, at));
        while (at < text.length()) {
            char c = text.charAt(at++);
            if (c == '"') {
                return out.toString();
            }
            if (c < 0x20) {
                at--;
                throw error("control character in a string");
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (at >= text.length()) {
                break;
            }
            char e = text.charAt(at++);
            switch (e) {
                case '"': case '\\': case '/': out.append(e); break;
                case 'b': out.append('\b'); break;
                case 'f': out.append('\f'); break;
                case 'n': out.append('\n'); break;
                case 'r': out.append('\r'); break;
                case 't': out.append('\t'); break;
                case 'u':
                    if (at + 4 > text.length()) {
                        throw error("short \\u escape");
                    }
                    try {
                        out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    } catch (NumberFormatException ex) {
                        throw error("bad \\u escape");
                    }
                    at += 4;
                    break;
                default:
                    throw error("bad escape \\" + e);
            }
        }
        throw error("unterminated string");
    }

    private BigDecimal number() {
        int start = at;
        if (text.charAt(at) == '-') {
            at++;
        }
        int digits = digits();
        if (digits == 0 || (digits > 1 && text.charAt(at - digits) == '0')) {
            throw error("bad number");
        }
        if (at < text.length() && text.charAt(at) == '.') {
            at++;
            if (digits() == 0) {
                throw error("bad fraction");
            }
        }
        if (at < text.length() && (text.charAt(at) == 'e' || text.charAt(at) == 'E')) {
            at++;
            if (at < text.length() && (text.charAt(at) == '+' || text.charAt(at) == '-')) {
                at++;
            }
            if (digits() == 0) {
                throw error("bad exponent");
            }
        }
        try {
            return new BigDecimal(text.substring(start, at));
        } catch (NumberFormatException | ArithmeticException ex) {
            throw error("number out of range");
        }
    }

    private int digits() {
        int n = 0;
        while (at < text.length() && text.charAt(at) >= '0' && text.charAt(at) <= '9') {
            at++;
            n++;
        }
        return n;
    }

    // ------------------------------------------------------------------ writing

    /** One line of JSON text for maps, lists, strings, numbers, booleans and null. */
    static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    private static void write(Object value, StringBuilder out) {
        if (value == null || value == NULL) {
            out.append("null");
        } else if (value instanceof String) {
            quote((String) value, out);
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                quote(String.valueOf(e.getKey()), out);
                out.append(':');
                write(e.getValue(), out);
            }
            out.append('}');
        } else if (value instanceof List) {
            out.append('[');
            boolean first = true;
            for (Object item : (List<?>) value) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                write(item, out);
            }
            out.append(']');
        } else if (value instanceof int[]) {
            out.append('[');
            int[] items = (int[]) value;
            for (int i = 0; i < items.length; i++) {
                out.append(i == 0 ? "" : ",").append(items[i]);
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException("cannot write " + value.getClass().getName() + " as JSON");
        }
    }

    private static void quote(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20 || (c >= 0xD800 && c <= 0xDFFF)) {
                        // Lone surrogates would not survive UTF-8; escaped they stay valid JSON.
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }

    /** A readable, short rendering of a value for messages ("nothing" when absent). */
    static String show(Object value) {
        if (value == null) {
            return "nothing";
        }
        String s = write(value);
        return s.length() > 120 ? s.substring(0, 117) + "..." : s;
    }
}
