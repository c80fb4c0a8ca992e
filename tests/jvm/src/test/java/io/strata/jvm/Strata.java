package io.strata.jvm;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.CommonClientConfigs;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs the built strata binary for a test class: {@code @RegisterExtension static Strata strata = new Strata();}.
 *
 * <p>The binary is {@code -Dstrata.bin}, else {@code $STRATA_BIN}, else {@code $CARGO_TARGET_DIR/debug/strata}, else
 * {@code target/debug/strata} of the repository. It starts with {@code --ephemeral} (or a given {@code log.dirs})
 * on {@code PLAINTEXT://127.0.0.1:0}; start-up waits (bounded) for the {@code strata ready: bootstrap.servers=}
 * line on stderr; stop sends SIGTERM and waits for the exit.
 */
public final class Strata implements BeforeAllCallback, AfterAllCallback {
  private static final Pattern READY = Pattern.compile("strata ready: bootstrap\\.servers=(\\S+)");
  private static final long START_TIMEOUT_S = 60;
  private static final long STOP_TIMEOUT_S = 30;

  private final List<String> overrides = new ArrayList<>();
  private Path logDir;
  private Process process;
  private Thread reader;
  private String bootstrap;
  private final List<String> stderr = Collections.synchronizedList(new ArrayList<>());

  /** Adds {@code --override key=value}. */
  public Strata with(String key, String value) {
    overrides.add(key + "=" + value);
    return this;
  }

  /** Keeps data in {@code dir} (not ephemeral), so it survives a stop. */
  public Strata logDir(Path dir) {
    this.logDir = dir;
    return this;
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    start();
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    stop();
  }

  public static Path binary() {
    String bin = System.getProperty("strata.bin");
    if (bin == null || bin.isEmpty()) bin = System.getenv("STRATA_BIN");
    if (bin != null && !bin.isEmpty()) return Path.of(bin);
    // The repository: the nearest directory up from here with a Cargo.toml (tests/jvm or tests/jvm/spring).
    Path repo = Path.of(System.getProperty("user.dir")).toAbsolutePath();
    while (repo.getParent() != null && !Files.exists(repo.resolve("Cargo.toml"))) repo = repo.getParent();
    String target = System.getenv("CARGO_TARGET_DIR");
    Path dir = target == null || target.isEmpty() ? repo.resolve("target") : repo.resolve(target);
    return dir.resolve("debug").resolve("strata");
  }

  /** Starts the broker and waits for its ready line. */
  public synchronized void start() throws IOException, InterruptedException, TimeoutException {
    Path bin = binary();
    if (!Files.isExecutable(bin)) {
      throw new IllegalStateException("strata binary not found at " + bin + " (set STRATA_BIN or build it)");
    }
    List<String> cmd = new ArrayList<>();
    cmd.add(bin.toString());
    if (logDir == null) {
      cmd.add("--ephemeral");
    } else {
      cmd.add("--override");
      cmd.add("log.dirs=" + logDir);
    }
    cmd.add("--override");
    cmd.add("listeners=PLAINTEXT://127.0.0.1:0");
    // As Kafka's EmbeddedKafka: no wait before a group's first rebalance (strata's default is Kafka's 3000).
    cmd.add("--override");
    cmd.add("group.initial.rebalance.delay.ms=0");
    for (String o : overrides) {
      cmd.add("--override");
      cmd.add(o);
    }
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().putIfAbsent("RUST_LOG", "warn,strata=info");
    pb.redirectOutput(ProcessBuilder.Redirect.DISCARD);
    stderr.clear();
    process = pb.start();
    CompletableFuture<String> ready = new CompletableFuture<>();
    Process p = process;
    reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(
          new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          stderr.add(line);
          Matcher m = READY.matcher(line);
          if (m.find()) ready.complete(m.group(1));
        }
      } catch (IOException e) {
        ready.completeExceptionally(new UncheckedIOException(e));
      }
      ready.completeExceptionally(new IllegalStateException("strata exited before its ready line:\n" + log()));
    }, "strata-stderr");
    reader.setDaemon(true);
    reader.start();
    try {
      bootstrap = ready.get(START_TIMEOUT_S, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException(e.getCause().getMessage(), e.getCause());
    } catch (TimeoutException e) {
      process.destroyForcibly();
      throw new TimeoutException("no ready line from strata within " + START_TIMEOUT_S + " s:\n" + log());
    }
  }

  /** Stops the broker with SIGTERM (a clean shutdown) and returns its exit code. */
  public synchronized int stop() throws InterruptedException {
    if (process == null) return 0;
    Process p = process;
    process = null;
    p.destroy();
    if (!p.waitFor(STOP_TIMEOUT_S, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      p.waitFor(STOP_TIMEOUT_S, TimeUnit.SECONDS);
      throw new IllegalStateException("strata did not stop within " + STOP_TIMEOUT_S + " s of SIGTERM");
    }
    // The rest of what it wrote (its last lines say why it stopped).
    if (reader != null) reader.join(TimeUnit.SECONDS.toMillis(5));
    return p.exitValue();
  }

  /** The broker's process id (for footprint figures such as its RSS in /proc). */
  public long pid() {
    if (process == null) throw new IllegalStateException("strata not started");
    return process.pid();
  }

  public String bootstrap() {
    if (bootstrap == null) throw new IllegalStateException("strata not started");
    return bootstrap;
  }

  /** Client properties with {@code bootstrap.servers} set. */
  public Properties props() {
    Properties p = new Properties();
    p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    return p;
  }

  /** The last {@code n} lines strata wrote to stderr. */
  public String logTail(int n) {
    synchronized (stderr) {
      return String.join("\n", stderr.subList(Math.max(0, stderr.size() - n), stderr.size()));
    }
  }

  /** What strata wrote to stderr so far. */
  public String log() {
    synchronized (stderr) {
      return String.join("\n", stderr);
    }
  }
}
