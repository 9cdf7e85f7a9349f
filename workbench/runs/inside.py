"""The sandbox's first process when its network is confined and the workbench cannot listen in its namespace
itself (workbench/runs/netns.py: it can as root; docs/security.md, "The network"):

    python -I -S inside.py SOCKET ENDPOINT... -- ARGV...

The sandbox has a network namespace of its own: its own loopback and nothing else, so nothing of the
machine (a service on the host's 127.0.0.1, an abstract unix socket, a cluster's scheduler) is in reach.
This process listens, inside, on each allowed loopback ENDPOINT (host:port) at the same address and port the
model has on the host, so a base URL such as http://127.0.0.1:PORT works unchanged; and on an HTTP proxy
port for every other endpoint (HTTPS_PROXY and HTTP_PROXY point at it). Each connection goes over the unix
SOCKET to the workbench's relay outside, which connects only to what the run allows. It listens first, then
starts ARGV, so the agent never races it, and exits with ARGV's status (128+N for a signal).

Standalone on purpose: no imports from the workbench, `-I -S`, and only built-in modules (`_socket`,
`_thread`: `socket`, `selectors` and `threading` would import enum, collections and an extension module),
a thread per listener instead of a selector, so that it starts in a few milliseconds: every turn of a real
agent pays for it."""

import _socket as socket  # the C module: `socket` would import enum and more, milliseconds per turn
import _thread
import os
import sys

LOOPBACK_NAMES = "localhost,127.0.0.1,::1"  # the sandbox's own loopback: never sent to the proxy
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")


def _split(endpoint: str) -> tuple[str, int]:
    host, _, port = endpoint.rpartition(":")
    return host.strip("[]"), int(port)


def _listeners(endpoint: str) -> list[socket.socket]:
    """Listening sockets at the endpoint's loopback address(es); "localhost" gets both families."""
    host, port = _split(endpoint)
    addresses = ["127.0.0.1", "::1"] if host == "localhost" else [host]
    made: list[socket.socket] = []
    for address in addresses:
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM, 0)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((address, port))
        except OSError:
            listener.close()
            if address == "::1" and made:  # no IPv6 loopback here: 127.0.0.1 is enough
                continue
            raise
        listener.listen(128)
        made.append(listener)
    return made


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        try:
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _forward(connection: socket.socket, relay_path: str, header: bytes) -> None:
    """One connection, carried to the relay outside, which is told what it is for."""
    outside = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0)
    try:
        outside.connect(relay_path)
        outside.sendall(header)
    except OSError:
        connection.close()
        outside.close()
        return
    done = _thread.allocate_lock()
    done.acquire()

    def back() -> None:
        _pump(outside, connection)
        done.release()

    _thread.start_new_thread(back, ())
    _pump(connection, outside)
    done.acquire()
    connection.close()
    outside.close()


def _start(argv: list[str], env: dict[str, str]) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            os.execvpe(argv[0], argv, env)
        except OSError as exc:
            os.write(2, f"cannot run {argv[0]}: {exc.strerror}\n".encode())
        os._exit(127)
    return pid


def _status(code: int) -> int:
    code = os.waitstatus_to_exitcode(code)
    return 128 - code if code < 0 else code


def main(args: list[str]) -> int:
    split = args.index("--")
    relay_path, endpoints, argv = args[1], args[2:split], args[split + 1 :]
    listening: list[tuple[socket.socket, bytes]] = []
    direct = LOOPBACK_NAMES.split(",")
    for endpoint in endpoints:  # one each address and port (network.Relay.loopback)
        try:
            listeners = _listeners(endpoint)
        except PermissionError:  # a port below 1024 needs a capability the sandbox does not have:
            host = _split(endpoint)[0]  # that name goes through the proxy instead
            direct = [name for name in direct if name != host]
            continue
        listening += [(listener, b"TO " + endpoint.encode() + b"\n") for listener in listeners]
    proxy = _listeners("127.0.0.1:0")[0]
    listening.append((proxy, b"PROXY\n"))
    address = f"http://127.0.0.1:{proxy.getsockname()[1]}"
    ours = (*PROXY_VARIABLES, "NO_PROXY", "no_proxy")  # any other *_proxy, in any case, goes (urllib reads them)
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy") or k in ours}
    env.update({name: address for name in PROXY_VARIABLES})
    env.update({"NO_PROXY": ",".join(direct), "no_proxy": ",".join(direct)})
    child = _start(argv, env)  # every listener listens already: the agent never races them
    for fd in (0, 1):  # the agent's stdin and stdout are its own: the workbench sees their end when it ends
        os.close(fd)
    for listener, header in listening:
        _thread.start_new_thread(_accept, (listener, header, relay_path))
    while True:
        try:
            return _status(os.waitpid(child, 0)[1])
        except InterruptedError:  # pragma: no cover - PEP 475 retries
            continue


def _accept(listener: socket.socket, header: bytes, relay_path: str) -> None:
    pause = _thread.allocate_lock()
    pause.acquire()
    while True:
        try:
            accepted, _ = listener._accept()  # type: ignore[attr-defined]  # the C socket's accept
        except OSError:  # out of descriptors, say: a moment, not a busy loop (a held lock's timeout sleeps)
            pause.acquire(timeout=0.05)
            continue
        connection = socket.socket(listener.family, socket.SOCK_STREAM, 0, accepted)
        _thread.start_new_thread(_forward, (connection, relay_path, header))


if __name__ == "__main__":
    sys.stdout.flush()
    os._exit(main(sys.argv))
