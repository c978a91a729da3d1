"""The replay processes alive on this machine, read from /proc (for the lifetime tests)."""
import os


def _processes():
    """(pid, state, process group, command line) of every process we may read."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                command = cmdline.read().split(b"\0")
        except OSError:  # ended meanwhile
            continue
        yield int(entry), fields[0], int(fields[2]), [c.decode() for c in command if c]


def replay_processes(kernel=None):
    """The live replay processes a kernel (pid; default: this process) started: roots and
    their forks, which keep the root's command line, ``--parent <kernel>`` included."""
    kernel = os.getpid() if kernel is None else kernel
    return sorted(pid for pid, state, _, command in _processes() if state != "Z"
                  and "--parent" in command and command[command.index("--parent") + 1:]
                  == [str(kernel)] and "--fd" in command)


def group(pgid):
    """The live processes of process group ``pgid``: a debugger's root and its forks."""
    return sorted(pid for pid, state, group_id, _ in _processes()
                  if state != "Z" and group_id == pgid)
