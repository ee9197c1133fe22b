"""The source a converter reads (standard library only): a checkout or `git archive` export of the source
repository, or a bare git directory such as a fetched snapshot (`/work/.mirror/<owner>+<name>/repo`), whose
files are read with `git show REV:path`. Shared by the converters in this folder.
"""
import argparse
import os
import subprocess


class Snapshot:
    """Files of the source at `commit` (REV): read from the folder `path` when it holds `marker` (a folder
    of the source's own, e.g. `exp_data`), else from the bare git directory `path`."""

    def __init__(self, path, commit, marker):
        self.path, self.commit = path, commit
        self.is_git = not os.path.isdir(os.path.join(path, marker))

    def read(self, rel):
        """The bytes of the source's file `rel`."""
        if not self.is_git:
            with open(os.path.join(self.path, rel), "rb") as f:
                return f.read()
        return subprocess.run(["git", "--git-dir", self.path, "show", "%s:%s" % (self.commit, rel)],
                              check=True, capture_output=True).stdout

    def exists(self, rel):
        """Whether the source has a file `rel`."""
        if not self.is_git:
            return os.path.exists(os.path.join(self.path, rel))
        return subprocess.run(["git", "--git-dir", self.path, "cat-file", "-e", "%s:%s" % (self.commit, rel)],
                              capture_output=True).returncode == 0

    def commit_hash(self):
        """The 40-hex commit read (None for a checkout or export: its commit is not known from the files)."""
        if not self.is_git:
            return None
        return subprocess.run(["git", "--git-dir", self.path, "rev-parse", self.commit + "^{commit}"], check=True,
                              capture_output=True, text=True).stdout.strip()


def arguments(description, extra=None):
    """The converters' command line: SOURCE OUTDIR [--commit REV], and what `extra(parser)` adds."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source")
    ap.add_argument("outdir")
    ap.add_argument("--commit", default="HEAD")
    if extra:
        extra(ap)
    return ap.parse_args()
