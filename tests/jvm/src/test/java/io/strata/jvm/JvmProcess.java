package io.strata.jvm;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A long-running {@code java -cp <the test classpath> <main class>} child (a Streams instance, a Connect worker)
 * that a test can kill with SIGKILL (a crash) or stop with SIGTERM; its stdout lines are kept for the test to
 * wait on, its stderr is kept for failure messages.
 */
public final class JvmProcess implements AutoCloseable {
  private final String name;
  private final Process process;
  private final List<String> out = Collections.synchronizedList(new ArrayList<>());
  private final List<String> err = Collections.synchronizedList(new ArrayList<>());

  private JvmProcess(String name, Process process) {
    this.name = name;
    this.process = process;
    pump(process.getInputStream(), out, name + "-out");
    pump(process.getErrorStream(), err, name + "-err");
  }

  /** Starts {@code mainClass} with {@code args} and JVM options {@code jvmOpts} (e.g. {@code -Dx=y}). */
  public static JvmProcess start(String name, List<String> jvmOpts, String mainClass, String... args)
      throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xshare:auto");
    cmd.add("-XX:TieredStopAtLevel=1");
    cmd.add("-Xmx256m");
    cmd.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
    cmd.addAll(jvmOpts);
    cmd.add("-cp");
    cmd.add(Tool.classpath());
    cmd.add(mainClass);
    cmd.addAll(List.of(args));
    return new JvmProcess(name, new ProcessBuilder(cmd).start());
  }

  private static void pump(java.io.InputStream in, List<String> into, String thread) {
    Thread t = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) into.add(line);
      } catch (IOException e) {
        into.add("<" + e + ">");
      }
    }, thread);
    t.setDaemon(true);
    t.start();
  }

  /** The stdout lines so far. */
  public List<String> lines() {
    synchronized (out) {
      return new ArrayList<>(out);
    }
  }

  /** Waits (bounded) for a stdout line matching {@code p}; fails naming the process and its output if none. */
  public String awaitLine(String what, Predicate<String> p, long timeoutMs) {
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    while (System.nanoTime() < end) {
      for (String l : lines()) if (p.test(l)) return l;
      if (!process.isAlive()) break;
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
    for (String l : lines()) if (p.test(l)) return l;
    throw new AssertionError(name + ": no " + what + " within " + timeoutMs + " ms (alive=" + process.isAlive()
        + ")\n" + describe());
  }

  /** SIGKILL: the process dies at once, with no shutdown hook, commit or flush (a crash). */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  public long pid() {
    return process.pid();
  }

  /** Its output so far, for failure messages. */
  public String describe() {
    List<String> o = lines();
    List<String> e;
    synchronized (err) {
      e = new ArrayList<>(err.subList(Math.max(0, err.size() - 60), err.size()));
    }
    return "--- " + name + " stdout (last 40)\n" + String.join("\n", o.subList(Math.max(0, o.size() - 40), o.size()))
        + "\n--- " + name + " stderr (last 60)\n" + String.join("\n", e);
  }

  /** SIGTERM and a bounded wait (shutdown hooks run); SIGKILL if it does not exit. */
  @Override
  public void close() throws InterruptedException {
    if (!process.isAlive()) return;
    process.destroy();
    if (!process.waitFor(30, TimeUnit.SECONDS)) kill();
  }
}
