package io.shale.ops.cli;

import io.shale.client.Txn;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The text form of a transaction for {@code shalectl txn}, one clause per line ({@code #} starts a
 * comment; a word with spaces goes in double quotes, with {@code \"} and {@code \\} inside):
 *
 * <pre>
 *   if version(KEY) == 0             compares: value, version, create, mod; ==, !=, &lt;, &gt;
 *   if value(KEY) != "some text"
 *   then put KEY VALUE               operations: put, del, delrange START [END], get
 *   else get KEY
 * </pre>
 *
 * A malformed line is an {@link IllegalArgumentException} naming its number.
 */
final class TxnSpec {
  private TxnSpec() {}

  /** Adds the clauses of {@code text} to {@code txn}. */
  static Txn parse(String text, Txn txn) {
    String[] lines = text.split("\n", -1);
    for (int n = 0; n < lines.length; n++) {
      List<String> w;
      try {
        w = words(lines[n]);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("line " + (n + 1) + ": " + e.getMessage(), e);
      }
      if (w.isEmpty()) {
        continue;
      }
      try {
        switch (w.get(0)) {
          case "if" -> compare(w, txn);
          case "then", "else" -> operation(w, w.get(0).equals("then"), txn);
          default -> throw new IllegalArgumentException("a line starts with if, then or else");
        }
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "line " + (n + 1) + " (" + lines[n].strip() + "): " + e.getMessage(), e);
      }
    }
    return txn;
  }

  private static void compare(List<String> w, Txn txn) {
    if (w.size() != 4) {
      throw new IllegalArgumentException("a compare is: if TARGET(KEY) OP OPERAND");
    }
    String target = w.get(1);
    int open = target.indexOf('(');
    if (open < 0 || !target.endsWith(")")) {
      throw new IllegalArgumentException("TARGET(KEY) expected, e.g. version(\"my key\")");
    }
    String what = target.substring(0, open);
    byte[] key = utf8(unquote(target.substring(open + 1, target.length() - 1)));
    Txn.Cmp cmp =
        switch (w.get(2)) {
          case "==", "=" -> Txn.Cmp.EQUAL;
          case "!=" -> Txn.Cmp.NOT_EQUAL;
          case "<" -> Txn.Cmp.LESS;
          case ">" -> Txn.Cmp.GREATER;
          default -> throw new IllegalArgumentException("OP is one of == != < >");
        };
    String operand = w.get(3);
    switch (what) {
      case "value" -> txn.ifValue(key, cmp, utf8(operand));
      case "version" -> txn.ifVersion(key, cmp, number(operand));
      case "create" -> txn.ifCreateIndex(key, cmp, number(operand));
      case "mod" -> txn.ifModIndex(key, cmp, number(operand));
      default -> throw new IllegalArgumentException("TARGET is value, version, create or mod");
    }
  }

  private static void operation(List<String> w, boolean then, Txn txn) {
    String op = w.size() > 1 ? w.get(1) : "";
    int args = w.size() - 2;
    switch (op) {
      case "put" -> {
        need(args == 2, "put KEY VALUE");
        byte[] k = utf8(w.get(2));
        byte[] v = utf8(w.get(3));
        if (then) {
          txn.thenPut(k, v);
        } else {
          txn.elsePut(k, v);
        }
      }
      case "del" -> {
        need(args == 1, "del KEY");
        if (then) {
          txn.thenDelete(utf8(w.get(2)));
        } else {
          txn.elseDelete(utf8(w.get(2)));
        }
      }
      case "delrange" -> {
        need(args == 1 || args == 2, "delrange START [END]");
        byte[] end = args == 2 ? utf8(w.get(3)) : null;
        if (then) {
          txn.thenDeleteRange(utf8(w.get(2)), end);
        } else {
          txn.elseDeleteRange(utf8(w.get(2)), end);
        }
      }
      case "get" -> {
        need(args == 1, "get KEY");
        if (then) {
          txn.thenGet(utf8(w.get(2)));
        } else {
          txn.elseGet(utf8(w.get(2)));
        }
      }
      default -> throw new IllegalArgumentException("an operation is put, del, delrange or get");
    }
  }

  private static void need(boolean ok, String form) {
    if (!ok) {
      throw new IllegalArgumentException("expected: " + form);
    }
  }

  private static long number(String s) {
    try {
      long n = Long.parseLong(s);
      if (n < 0) {
        throw new NumberFormatException();
      }
      return n;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("'" + s + "' is not a non-negative number", e);
    }
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String unquote(String s) {
    List<String> w = words(s);
    if (w.size() != 1) {
      throw new IllegalArgumentException("one key expected in TARGET(KEY), got '" + s + "'");
    }
    return w.get(0);
  }

  /** The line's words: split at spaces outside double quotes, comments dropped. */
  static List<String> words(String line) {
    List<String> out = new ArrayList<>();
    StringBuilder word = null;
    boolean quoted = false;
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (quoted) {
        if (c == '\\' && i + 1 < line.length()) {
          word.append(line.charAt(++i));
        } else if (c == '"') {
          quoted = false;
        } else {
          word.append(c);
        }
      } else if (c == '"') {
        quoted = true;
        word = word == null ? new StringBuilder() : word;
      } else if (c == '#' && word == null) {
        break;
      } else if (Character.isWhitespace(c)) {
        if (word != null) {
          out.add(word.toString());
          word = null;
        }
      } else {
        word = word == null ? new StringBuilder() : word;
        word.append(c);
      }
    }
    if (quoted) {
      throw new IllegalArgumentException("a quote is not closed");
    }
    if (word != null) {
      out.add(word.toString());
    }
    return out;
  }
}
