#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host side of a scripts/vm guest's QMP channel.

usage: qmp-relay.py SOCKET RESULTS DEVICE-ID...

Connects to QEMU's QMP socket and, until QEMU exits:
 - runs the QMP commands the guest leaves in RESULTS/.qmp/<name>.req (one
   JSON object, {"execute": ..., "arguments": ...}) and answers each in
   <name>.rsp: "ok" and the return value (a list as space-separated words,
   a scalar as is, anything else as JSON), or "error: <description>";
 - answers the relay's own command {"execute": "x-stall-host",
   "arguments": {"ms": M}} by stopping the whole QEMU process with SIGSTOP
   for M ms (at most 1000), as an overloaded host or a hypervisor does to
   a guest; the guest's clock runs on, so its timers fire late;
 - answers {"execute": "x-stall-vcpu", "arguments": {"cpu": C, "ms": M}}
   by stopping only the thread of vCPU C (QEMU's multi-threaded TCG gives
   each vCPU a thread of its own) for M ms (at most 1000) with ptrace:
   that CPU takes no interrupt meanwhile, as with interrupts off, while
   the others run on (unless the thread was stopped holding QEMU's big
   lock, which TCG vCPUs take only for I/O: the others then wait too);
 - when the guest powers off (QEMU started with -action shutdown=pause, so
   the devices are still there), writes RESULTS/qemu-counters.json with the
   counters of each NVMe device and quits QEMU.
The guest end is scripts/guest/qmp.
"""
import ctypes
import json
import os
import signal
import socket
import sys
import time

COUNTERS = ('x-msix-messages', 'x-msix-dropped', 'x-power-state-entries')


class Qmp:
    def __init__(self, path):
        deadline = time.monotonic() + 30
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self.buf = b''
        self.events = []
        self.recv()                       # greeting
        self.cmd('qmp_capabilities')

    def recv(self, timeout=None):
        self.sock.settimeout(timeout)
        while b'\n' not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise EOFError
            self.buf += data
        line, self.buf = self.buf.split(b'\n', 1)
        return json.loads(line)

    def cmd(self, execute, arguments=None):
        msg = {'execute': execute}
        if arguments:
            msg['arguments'] = arguments
        self.sock.sendall(json.dumps(msg).encode() + b'\n')
        while True:
            r = self.recv(30)
            if 'event' in r:
                self.events.append(r['event'])
                continue
            return r

    def poll_event(self, timeout):
        if self.events:
            return self.events.pop(0)
        try:
            r = self.recv(timeout)
        except socket.timeout:
            return None
        return r.get('event')


def fmt(value):
    if isinstance(value, list) and all(not isinstance(v, (list, dict)) for v in value):
        return ' '.join(str(v) for v in value)
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    if isinstance(value, bool):
        return 'true' if value else 'false'
    return str(value)


def stall_host(q, ms):
    """SIGSTOP QEMU for ms milliseconds; its pid is a vCPU thread's group."""
    if not isinstance(ms, int) or not 1 <= ms <= 1000:
        return {'error': {'desc': 'ms must be an integer in 1..1000'}}
    r = q.cmd('query-cpus-fast')
    if 'error' in r:
        return r
    tid = r['return'][0]['thread-id']
    os.kill(tid, signal.SIGSTOP)
    try:
        time.sleep(ms / 1000)
    finally:
        os.kill(tid, signal.SIGCONT)
    return {'return': ms}


PTRACE_DETACH = 17
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
WALL = 0x40000000                         # __WALL: wait for a thread


def stall_vcpu(q, cpu, ms):
    """Stop vCPU cpu's thread alone for ms milliseconds."""
    if not isinstance(ms, int) or not 1 <= ms <= 1000:
        return {'error': {'desc': 'ms must be an integer in 1..1000'}}
    r = q.cmd('query-cpus-fast')
    if 'error' in r:
        return r
    tids = {c['cpu-index']: c['thread-id'] for c in r['return']}
    if cpu not in tids:
        return {'error': {'desc': 'no vCPU %r' % (cpu,)}}
    tid = tids[cpu]
    if list(tids.values()).count(tid) > 1:
        return {'error': {'desc': 'vCPU %d shares its thread with another '
                          '(single-threaded TCG): it cannot stop alone' % cpu}}
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.ptrace(PTRACE_SEIZE, tid, None, None) != 0:
        return {'error': {'desc': 'ptrace: %s' % os.strerror(ctypes.get_errno())}}
    try:
        if libc.ptrace(PTRACE_INTERRUPT, tid, None, None) != 0:
            return {'error': {'desc': 'ptrace: %s' % os.strerror(ctypes.get_errno())}}
        os.waitpid(tid, WALL)             # stopped now
        time.sleep(ms / 1000)
    finally:
        libc.ptrace(PTRACE_DETACH, tid, None, None)
    return {'return': ms}


def serve(q, qdir):
    for name in sorted(os.listdir(qdir)):
        if not name.endswith('.req'):
            continue
        path = os.path.join(qdir, name)
        with open(path) as f:
            text = f.read()
        if not text.endswith('\n'):
            continue                      # still being written
        try:
            req = json.loads(text)
            args = req.get('arguments', {})
            if req['execute'] == 'x-stall-host':
                r = stall_host(q, args.get('ms'))
            elif req['execute'] == 'x-stall-vcpu':
                r = stall_vcpu(q, args.get('cpu'), args.get('ms'))
            else:
                r = q.cmd(req['execute'], req.get('arguments'))
            if 'error' in r:
                out = 'error: %s\n' % r['error'].get('desc', r['error'])
            else:
                out = 'ok\n%s\n' % fmt(r.get('return'))
        except (ValueError, KeyError, TypeError) as e:
            out = 'error: bad request: %s\n' % e
        rsp = path[:-4] + '.rsp'
        with open(rsp + '.tmp', 'w') as f:
            f.write(out)
        os.rename(rsp + '.tmp', rsp)
        os.unlink(path)


def dump_counters(q, devices, path):
    out = {}
    for dev in devices:
        out[dev] = {}
        for prop in COUNTERS:
            r = q.cmd('qom-get', {'path': '/machine/peripheral/' + dev,
                                  'property': prop})
            if 'return' in r:
                out[dev][prop] = r['return']
    with open(path, 'w') as f:
        json.dump(out, f, indent=1)


def main():
    sock, results, devices = sys.argv[1], sys.argv[2], sys.argv[3:]
    qdir = os.path.join(results, '.qmp')
    os.makedirs(qdir, exist_ok=True)
    try:
        q = Qmp(sock)
    except (OSError, EOFError):
        return 1
    try:
        while True:
            ev = q.poll_event(0.02)
            if ev in ('SHUTDOWN', 'STOP'):
                dump_counters(q, devices,
                              os.path.join(results, 'qemu-counters.json'))
                q.cmd('quit')
                return 0
            serve(q, qdir)
    except (EOFError, ConnectionError):
        return 0                          # QEMU went away (killed, or quit)
    except Exception as e:                # a QMP timeout or a bad answer:
        # never leave QEMU paused (scripts/vm also stops a QEMU that
        # outlives the relay once the guest has reported its status)
        sys.stderr.write('qmp-relay: %r; quitting QEMU\n' % e)
        try:
            q.cmd('quit')
        except Exception:
            pass
        return 1


if __name__ == '__main__':
    sys.exit(main())
