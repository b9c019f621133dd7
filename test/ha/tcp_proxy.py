#!/usr/bin/python3
"""test/ha/tcp_proxy.py — a loopback TCP forwarder, so a test can cut one
Patroni node off from etcd without touching the others.

    tcp_proxy.py LISTEN-PORT TARGET-PORT

Forwards every connection to 127.0.0.1:LISTEN-PORT on to
127.0.0.1:TARGET-PORT.  The partition is the proxy's death: killing it
(by PID) closes every forwarded connection, and new ones are refused,
which is what a node sees when the network between it and etcd fails.
Started again on the same port, it heals the partition.
"""
import signal
import socket
import sys
import threading


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(client, target_port):
    try:
        upstream = socket.create_connection(("127.0.0.1", target_port), timeout=5)
        upstream.settimeout(None)
    except OSError:
        client.close()
        return
    threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
    threading.Thread(target=pump, args=(upstream, client), daemon=True).start()


def main():
    listen_port, target_port = int(sys.argv[1]), int(sys.argv[2])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", listen_port))
    server.listen(64)
    while True:
        client, _ = server.accept()
        serve(client, target_port)


if __name__ == "__main__":
    main()
