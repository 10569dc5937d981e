package io.shale.ops.cli;

import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The JSON shalectl prints: maps (in their iteration order), lists, strings, numbers, booleans and
 * null; enough for its output, so the tool needs no JSON library.
 */
final class Json {
  private Json() {}

  static String write(Object value) {
    StringBuilder out = new StringBuilder();
    write(value, out);
    return out.toString();
  }

  private static void write(Object v, StringBuilder out) {
    if (v == null) {
      out.append("null");
    } else if (v instanceof String s) {
      string(s, out);
    } else if (v instanceof Number || v instanceof Boolean) {
      out.append(v);
    } else if (v instanceof Map<?, ?> m) {
      out.append('{');
      Iterator<? extends Map.Entry<?, ?>> it = m.entrySet().iterator();
      while (it.hasNext()) {
        Map.Entry<?, ?> e = it.next();
        string(String.valueOf(e.getKey()), out);
        out.append(':');
        write(e.getValue(), out);
        if (it.hasNext()) {
          out.append(',');
        }
      }
      out.append('}');
    } else if (v instanceof List<?> l) {
      out.append('[');
      for (int i = 0; i < l.size(); i++) {
        if (i > 0) {
          out.append(',');
        }
        write(l.get(i), out);
      }
      out.append(']');
    } else {
      throw new IllegalArgumentException("no JSON form for " + v.getClass());
    }
  }

  private static void string(String s, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }
}
