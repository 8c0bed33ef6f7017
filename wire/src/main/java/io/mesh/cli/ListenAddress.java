package io.mesh.cli;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/** Parses {@code HOST:PORT} listen addresses such as {@code 127.0.0.1:9464} or {@code [::1]:9464}. */
public final class ListenAddress {
    private ListenAddress() {}

    /**
     * @param flag   the flag, for messages, such as {@code --metrics-listen}
     * @param listen {@code HOST:PORT}; port 0 picks a free one
     * @return the address
     * @throws IllegalArgumentException naming the flag and the expected form
     */
    public static InetSocketAddress parse(String flag, String listen) {
        int colon = listen == null ? -1 : listen.lastIndexOf(':');
        if (colon <= 0 || colon == listen.length() - 1) {
            throw new IllegalArgumentException(flag + " must be HOST:PORT, such as 127.0.0.1:7070; got '" + listen + "'");
        }
        String host = listen.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) host = host.substring(1, host.length() - 1);
        int port;
        try {
            port = Integer.parseInt(listen.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + " port must be a number from 0 to 65535; got '" + listen + "'");
        }
        if (port < 0 || port > 65535) throw new IllegalArgumentException(flag + " port must be from 0 to 65535; got " + port);
        try {
            return new InetSocketAddress(InetAddress.getByName(host), port);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(flag + " host '" + host + "' is unknown: give an address such as 127.0.0.1");
        }
    }
}
