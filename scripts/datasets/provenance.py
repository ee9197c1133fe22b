"""Provenance written beside every converted recording (docs/datasets.md): a README.md naming the source
repository, the commit read, the licence (its text copied as LICENSE), what the converter did and how to
redo it, and the index README.md of the folder that holds the conversions.

Used by convert_cuhksz.py, convert_hanyang_uwb.py and convert_librsf_uwb.py; standard library only.
"""
import datetime
import os


def write(outdir, *, title, source_url, commit, licence, licence_text, converter, argv, description, notes=()):
    """Writes OUTDIR/README.md and OUTDIR/LICENSE (the source's licence text), then the index of the
    parent folder (`write_index`). `argv` is the converter's command line (its arguments after the
    script name); `description` the converter's docstring (what it reads and writes)."""
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "LICENSE"), "w") as f:
        f.write(licence_text if licence_text.endswith("\n") else licence_text + "\n")
    lines = ["# %s" % title, "",
             "Converted to the formats of SPEC.md (site.json, trace.csv, truth.csv) by `scripts/datasets/%s` of the "
             "Locus repository. Not part of the repository: read where it lies (docs/datasets.md)." % converter, "",
             "- **Source**: %s, commit `%s`" % (source_url, commit or "not known (converted from a checkout or export)"),
             "- **Licence**: %s; the source's licence text is in `LICENSE` beside this file." % licence,
             "- **Made by**: `scripts/datasets/%s %s`, %s UTC" % (
                 converter, " ".join(argv), datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")),
             "- **Counts**: `conversion.json` beside this file (rows kept and dropped, per run)."
             if os.path.exists(os.path.join(outdir, "conversion.json")) else "- **Counts**: printed by the converter."]
    lines += ["- %s" % n for n in notes]
    lines += ["", "## What the converter reads and writes", "", "```", description.strip(), "```", ""]
    with open(os.path.join(outdir, "README.md"), "w") as f:
        f.write("\n".join(lines))
    write_index(os.path.dirname(os.path.abspath(outdir)))


def write_index(parent):
    """PARENT/README.md: one row per folder of PARENT that holds a README.md written by `write` (its title
    and source line)."""
    rows = []
    for name in sorted(os.listdir(parent)):
        readme = os.path.join(parent, name, "README.md")
        if not os.path.isfile(readme):
            continue
        with open(readme) as f:
            text = f.read().splitlines()
        title = text[0].lstrip("# ").strip() if text else name
        source = next((l.split("**Source**:", 1)[1].strip() for l in text if "**Source**:" in l), "")
        licence = next((l.split("**Licence**:", 1)[1].split(";")[0].strip() for l in text if "**Licence**:" in l), "")
        rows.append("| `%s` | %s | %s | %s |" % (name, title, source, licence))
    with open(os.path.join(parent, "README.md"), "w") as f:
        f.write("# Real UWB recordings converted for Locus (outside the repository)\n\n"
                "Each folder was written by a converter in the Locus repository's `scripts/datasets/` and holds its own\n"
                "README.md (source, commit, licence, how it was made) and the source's LICENSE. See docs/datasets.md.\n\n"
                "| folder | recording | source | licence |\n| --- | --- | --- | --- |\n" + "\n".join(rows) + "\n")
