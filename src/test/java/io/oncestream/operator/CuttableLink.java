package io.oncestream.operator;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay from a loopback port of its own to a server, whose link can be cut: from then on
 * the bytes are dropped both ways and the connections stay open, as when a network partition
 * takes a worker away (its process still runs, nothing answers, nothing is refused).
 */
final class CuttableLink implements AutoCloseable {

    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean cut;

    CuttableLink(InetSocketAddress target) throws IOException {
        this.target = target;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        daemon("cuttable-link", this::accept);
    }

    /** The address to reach the server through this link. */
    String address() {
        return "127.0.0.1:" + listener.getLocalPort();
    }

    /** From now on nothing passes either way. */
    void cut() {
        cut = true;
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket in = listener.accept();
                Socket out = new Socket(target.getAddress(), target.getPort());
                sockets.add(in);
                sockets.add(out);
                daemon("cuttable-link-in", () -> pump(in, out));
                daemon("cuttable-link-out", () -> pump(out, in));
            } catch (IOException closed) {
                return;
            }
        }
    }

    private void pump(Socket from, Socket to) {
        byte[] buffer = new byte[8192];
        try {
            InputStream in = from.getInputStream();
            OutputStream out = to.getOutputStream();
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                if (!cut) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            }
            if (!cut) {
                to.shutdownOutput();
            }
        } catch (IOException closed) {
            // either end went away: so does this direction
        }
    }

    private static void daemon(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void close() throws IOException {
        listener.close();
        for (Socket socket : sockets) {
            socket.close();
        }
    }
}
