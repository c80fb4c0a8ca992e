package io.strata.jvm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs one of Kafka's command-line tools as {@code java -cp <the test classpath> <main class> args...}. */
public final class Tool {
  /** What a tool run gave: exit code and output. */
  public record Result(int exit, String out, String err) {
    @Override
    public String toString() {
      return "exit " + exit + "\n--- stdout\n" + out + "\n--- stderr\n" + err;
    }
  }

  private static final long TIMEOUT_S = 90;

  private Tool() {}

  static String classpath() throws IOException {
    String file = System.getProperty("tools.classpath", "target/tools.classpath");
    return Files.readString(Path.of(file)).trim() + java.io.File.pathSeparator
        + System.getProperty("java.class.path");
  }

  /** Runs {@code mainClass} with {@code args}, {@code stdin} (may be null) as its input. */
  public static Result run(String mainClass, String stdin, String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xshare:auto");
    cmd.add("-XX:TieredStopAtLevel=1");
    cmd.add("-Xms64m");
    cmd.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
    cmd.add("-cp");
    cmd.add(classpath());
    cmd.add(mainClass);
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).start();
    CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
    CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
    try (var in = p.getOutputStream()) {
      if (stdin != null) in.write(stdin.getBytes(StandardCharsets.UTF_8));
    }
    if (!p.waitFor(TIMEOUT_S, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(mainClass + " did not finish within " + TIMEOUT_S + " s: " + String.join(" ", args)
          + "\n" + out.getNow("") + err.getNow(""));
    }
    return new Result(p.exitValue(), out.get(10, TimeUnit.SECONDS), err.get(10, TimeUnit.SECONDS));
  }

  private static String read(java.io.InputStream in) {
    try {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "<" + e + ">";
    }
  }
}
