// A filesystem RemoteStorageManager for Apache Kafka's RemoteLogManager (KIP-405), the reference beside strata's
// filesystem tier in bench/vs-kafka.sh tiered. Kafka publishes no filesystem RSM in its main artifacts (its
// LocalTieredStorage lives in the kafka-storage test jar, which Maven Central does not serve for 4.4.0), so this one
// is ours: compiled by bench/kafka/kafka.sh rsm against kafka-storage-api, no other dependency.
//
// Layout: <rsm.config.dir>/<topic>-<partition>/<base offset, 20 digits>-<segment uuid>.{log,index,timeindex,snapshot,txnindex,leader-epoch}.
// Copies are plain file copies (then fsync); ranged fetches open the file and skip to the position.
package strata.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.server.log.remote.storage.LogSegmentData;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteResourceNotFoundException;
import org.apache.kafka.server.log.remote.storage.RemoteStorageException;
import org.apache.kafka.server.log.remote.storage.RemoteStorageManager;

public final class FsRemoteStorageManager implements RemoteStorageManager {
    private Path root;

    @Override
    public void configure(Map<String, ?> configs) {
        Object dir = configs.get("dir");
        if (dir == null) {
            throw new IllegalArgumentException("rsm.config.dir is required");
        }
        root = Paths.get(dir.toString());
    }

    private Path base(RemoteLogSegmentMetadata m) {
        var tp = m.remoteLogSegmentId().topicIdPartition().topicPartition();
        return root.resolve(tp.topic() + "-" + tp.partition())
                .resolve(String.format("%020d-%s", m.startOffset(), m.remoteLogSegmentId().id()));
    }

    private static Path file(Path base, String suffix) {
        return base.resolveSibling(base.getFileName() + suffix);
    }

    private static void copy(Path from, Path to) throws IOException {
        Files.copy(from, to, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel c = FileChannel.open(to, StandardOpenOption.WRITE)) {
            c.force(true);
        }
    }

    @Override
    public Optional<RemoteLogSegmentMetadata.CustomMetadata> copyLogSegmentData(RemoteLogSegmentMetadata m,
            LogSegmentData d) throws RemoteStorageException {
        Path b = base(m);
        try {
            Files.createDirectories(b.getParent());
            copy(d.logSegment(), file(b, ".log"));
            copy(d.offsetIndex(), file(b, ".index"));
            copy(d.timeIndex(), file(b, ".timeindex"));
            copy(d.producerSnapshotIndex(), file(b, ".snapshot"));
            if (d.transactionIndex().isPresent()) {
                copy(d.transactionIndex().get(), file(b, ".txnindex"));
            }
            ByteBuffer epochs = d.leaderEpochIndex().duplicate();
            try (FileChannel c = FileChannel.open(file(b, ".leader-epoch"), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                while (epochs.hasRemaining()) {
                    c.write(epochs);
                }
                c.force(true);
            }
        } catch (IOException e) {
            throw new RemoteStorageException("copying " + m.remoteLogSegmentId() + " to " + b, e);
        }
        return Optional.empty();
    }

    private static InputStream open(Path p, long start, long end) throws RemoteStorageException {
        try {
            FileChannel c = FileChannel.open(p, StandardOpenOption.READ);
            long stop = Math.min(end, c.size());
            c.position(start);
            InputStream in = Channels.newInputStream(c);
            return new InputStream() {
                long left = Math.max(0, stop - start);

                @Override
                public int read() throws IOException {
                    if (left <= 0) {
                        return -1;
                    }
                    int r = in.read();
                    if (r >= 0) {
                        left--;
                    }
                    return r;
                }

                @Override
                public int read(byte[] buf, int off, int len) throws IOException {
                    if (left <= 0) {
                        return -1;
                    }
                    int n = in.read(buf, off, (int) Math.min(len, left));
                    if (n > 0) {
                        left -= n;
                    }
                    return n;
                }

                @Override
                public void close() throws IOException {
                    in.close();
                }
            };
        } catch (java.nio.file.NoSuchFileException e) {
            throw new RemoteResourceNotFoundException("no such remote file " + p, e);
        } catch (IOException e) {
            throw new RemoteStorageException("reading " + p, e);
        }
    }

    @Override
    public InputStream fetchLogSegment(RemoteLogSegmentMetadata m, int start) throws RemoteStorageException {
        return open(file(base(m), ".log"), start, Long.MAX_VALUE);
    }

    @Override
    public InputStream fetchLogSegment(RemoteLogSegmentMetadata m, int start, int end) throws RemoteStorageException {
        // end is inclusive in the contract.
        return open(file(base(m), ".log"), start, (long) end + 1);
    }

    @Override
    public InputStream fetchIndex(RemoteLogSegmentMetadata m, IndexType t) throws RemoteStorageException {
        String suffix = switch (t) {
            case OFFSET -> ".index";
            case TIMESTAMP -> ".timeindex";
            case PRODUCER_SNAPSHOT -> ".snapshot";
            case TRANSACTION -> ".txnindex";
            case LEADER_EPOCH -> ".leader-epoch";
        };
        return open(file(base(m), suffix), 0, Long.MAX_VALUE);
    }

    @Override
    public void deleteLogSegmentData(RemoteLogSegmentMetadata m) throws RemoteStorageException {
        Path b = base(m);
        try {
            for (String s : new String[] {".log", ".index", ".timeindex", ".snapshot", ".txnindex", ".leader-epoch"}) {
                Files.deleteIfExists(file(b, s));
            }
        } catch (IOException e) {
            throw new RemoteStorageException("deleting " + b, e);
        }
    }

    @Override
    public void close() {
    }
}
