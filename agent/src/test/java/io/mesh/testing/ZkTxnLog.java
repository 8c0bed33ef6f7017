package io.mesh.testing;

import org.apache.jute.Record;
import org.apache.zookeeper.ZooDefs.OpCode;
import org.apache.zookeeper.server.ByteBufferInputStream;
import org.apache.zookeeper.server.persistence.FileTxnLog;
import org.apache.zookeeper.server.persistence.TxnLog;
import org.apache.zookeeper.txn.CloseSessionTxn;
import org.apache.zookeeper.txn.CreateContainerTxn;
import org.apache.zookeeper.txn.CreateTTLTxn;
import org.apache.zookeeper.txn.CreateTxn;
import org.apache.zookeeper.txn.DeleteTxn;
import org.apache.zookeeper.txn.MultiTxn;
import org.apache.zookeeper.txn.SetDataTxn;
import org.apache.zookeeper.txn.Txn;
import org.apache.zookeeper.txn.TxnHeader;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The exact history of znode changes, read from a ZooKeeper server's own transaction log (the ensemble's servers
 * write one in their data directories): every create, set and delete with its zxid and the leader's clock time in
 * milliseconds, including the ephemeral nodes that vanish when their session closes or expires. Used as evidence
 * next to Docker's events (same machine, same clock).
 */
public final class ZkTxnLog {
    private ZkTxnLog() {}

    /** What happened to a znode. */
    public enum Kind { CREATE, SET, DELETE }

    /**
     * One change of one znode.
     *
     * @param zxid    ZooKeeper transaction id
     * @param time    leader's clock, epoch milliseconds
     * @param session session that made it (for a deletion at session end: that session)
     * @param kind    create, set or delete
     * @param path    the znode
     * @param data    its data after the change (null for a delete)
     * @param bySessionEnd true when an ephemeral node went because its session closed or expired
     */
    public record Change(long zxid, long time, long session, Kind kind, String path, byte[] data, boolean bySessionEnd) {}

    /**
     * Reads a server's log from a zxid on, resolving session ends into deletions of their ephemeral nodes (created
     * within the range read).
     *
     * @param dataDir  the server's data directory (holding {@code version-2})
     * @param fromZxid first zxid of interest
     * @return changes in zxid order
     * @throws IOException when the log cannot be read
     */
    public static List<Change> read(Path dataDir, long fromZxid) throws IOException {
        List<Change> out = new ArrayList<>();
        Path logDir = dataDir.resolve("version-2");
        if (!Files.isDirectory(logDir)) return out;
        Map<Long, Set<String>> ephemeralBySession = new HashMap<>();
        FileTxnLog log = new FileTxnLog(logDir.toFile());
        try (TxnLog.TxnIterator it = log.read(fromZxid)) {
            while (it.getHeader() != null) {
                TxnHeader h = it.getHeader();
                if (h.getZxid() >= fromZxid) add(out, ephemeralBySession, h, h.getType(), it.getTxn());
                if (!it.next()) break;
            }
        }
        return out;
    }

    /**
     * Reads the logs of several servers of one ensemble and merges them by zxid: a server that was down or was brought
     * up to date from a snapshot lacks part of the history in its own log, but every committed transaction is in the
     * log of a quorum, so the union is the whole history (each zxid once). Logs a server is still appending to may end
     * in a partly written record: reading stops there, and that record is in another server's log.
     *
     * @param dataDirs the servers' data directories (each holding {@code version-2})
     * @param fromZxid first zxid of interest
     * @return changes in zxid order
     * @throws IOException when no log can be read
     */
    public static List<Change> readMerged(List<Path> dataDirs, long fromZxid) throws IOException {
        java.util.TreeMap<Long, Object[]> txns = new java.util.TreeMap<>();
        IOException last = null;
        int read = 0;
        for (Path dataDir : dataDirs) {
            Path logDir = dataDir.resolve("version-2");
            if (!Files.isDirectory(logDir)) continue;
            try (TxnLog.TxnIterator it = new FileTxnLog(logDir.toFile()).read(fromZxid)) {
                while (it.getHeader() != null) {
                    TxnHeader h = it.getHeader();
                    if (h.getZxid() >= fromZxid) txns.putIfAbsent(h.getZxid(), new Object[] {h, it.getTxn()});
                    if (!it.next()) break;
                }
                read++;
            } catch (IOException e) {
                last = e; // a record being written (or a CRC over it): what was read so far counts
                read++;
            }
        }
        if (read == 0 && last != null) throw last;
        List<Change> out = new ArrayList<>();
        Map<Long, Set<String>> ephemeralBySession = new HashMap<>();
        for (Object[] t : txns.values()) {
            TxnHeader h = (TxnHeader) t[0];
            add(out, ephemeralBySession, h, h.getType(), (Record) t[1]);
        }
        return out;
    }

    private static void add(List<Change> out, Map<Long, Set<String>> eph, TxnHeader h, int type, Record r) throws IOException {
        long s = h.getClientId();
        switch (type) {
            case OpCode.create, OpCode.create2 -> {
                CreateTxn c = (CreateTxn) r;
                out.add(new Change(h.getZxid(), h.getTime(), s, Kind.CREATE, c.getPath(), c.getData(), false));
                if (c.getEphemeral()) eph.computeIfAbsent(s, k -> new HashSet<>()).add(c.getPath());
            }
            case OpCode.createContainer -> {
                CreateContainerTxn c = (CreateContainerTxn) r;
                out.add(new Change(h.getZxid(), h.getTime(), s, Kind.CREATE, c.getPath(), c.getData(), false));
            }
            case OpCode.createTTL -> {
                CreateTTLTxn c = (CreateTTLTxn) r;
                out.add(new Change(h.getZxid(), h.getTime(), s, Kind.CREATE, c.getPath(), c.getData(), false));
            }
            case OpCode.delete, OpCode.deleteContainer -> {
                DeleteTxn d = (DeleteTxn) r;
                out.add(new Change(h.getZxid(), h.getTime(), s, Kind.DELETE, d.getPath(), null, false));
                eph.values().forEach(set -> set.remove(d.getPath()));
            }
            case OpCode.setData -> {
                SetDataTxn d = (SetDataTxn) r;
                out.add(new Change(h.getZxid(), h.getTime(), s, Kind.SET, d.getPath(), d.getData(), false));
            }
            case OpCode.closeSession -> {
                Set<String> gone = new HashSet<>(eph.getOrDefault(s, Set.of()));
                if (r instanceof CloseSessionTxn c && c.getPaths2Delete() != null) gone.addAll(c.getPaths2Delete());
                for (String p : gone.stream().sorted().toList()) {
                    out.add(new Change(h.getZxid(), h.getTime(), s, Kind.DELETE, p, null, true));
                    eph.values().forEach(set -> set.remove(p));
                }
                eph.remove(s);
            }
            case OpCode.multi -> {
                for (Txn t : ((MultiTxn) r).getTxns()) {
                    Record sub = switch (t.getType()) {
                        case OpCode.create, OpCode.create2 -> new CreateTxn();
                        case OpCode.createContainer -> new CreateContainerTxn();
                        case OpCode.createTTL -> new CreateTTLTxn();
                        case OpCode.delete, OpCode.deleteContainer -> new DeleteTxn();
                        case OpCode.setData -> new SetDataTxn();
                        default -> null;
                    };
                    if (sub == null) continue;
                    ByteBufferInputStream.byteBuffer2Record(ByteBuffer.wrap(t.getData()), sub);
                    add(out, eph, h, t.getType(), sub);
                }
            }
            default -> {
                // sessions, checks, errors: not a znode change
            }
        }
    }

    /**
     * Reads every server of an ensemble and keeps the most complete history (the servers replicate one log; one that
     * was down part of the time has less of it).
     *
     * @param zk       the ensemble
     * @param fromZxid first zxid of interest
     * @return changes in zxid order
     * @throws IOException when no log can be read
     */
    public static List<Change> read(ZkEnsemble zk, long fromZxid) throws IOException {
        List<Change> best = List.of();
        for (int i = 1; i <= ZkEnsemble.SIZE; i++) {
            List<Change> c = read(zk.dataDir(i), fromZxid);
            if (c.size() > best.size()) best = c;
        }
        return best;
    }
}
