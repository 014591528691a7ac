"""Sphinx configuration of the mklcore book (built by ``make book``; see docs/README.md).

Sphinx with MyST-NB and the Sphinx Book Theme is the engine and look of Jupyter Book 1, used
directly: the site renders the executed notebooks committed under ``figures/`` without running
them, and ``sphinx.ext.autodoc`` with ``napoleon`` turns the numpydoc docstrings into the API
reference. MathJax 3 is served from the book itself (the ``sphinx-mathjax-offline`` package
bundles it), so pages typeset their equations with no network access.
"""

import sys
from pathlib import Path

from docutils import nodes

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import mklcore  # noqa: E402

project = "mklcore"
author = "mklcore developers"
copyright = "mklcore developers, BSD-3-Clause"
release = version = mklcore.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",
]

# MyST-NB: render the committed outputs, never execute
nb_execution_mode = "off"
nb_merge_streams = True
nb_ipywidgets_js = {}  # no widget manager from a CDN (build_book.py drops the progress bars)
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_dmath_double_inline = True  # `$$...$$` inside a paragraph, as Jupyter renders it
myst_heading_anchors = 3
exclude_patterns = ["_paper_table.md", "_toc.md"]

# API reference from the numpydoc docstrings
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {"members": True, "show-inheritance": True}
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

html_theme = "sphinx_book_theme"
html_title = f"mklcore {version}"
html_theme_options = {
    "home_page_in_toc": True,
    "show_navbar_depth": 1,
    "show_toc_level": 2,
}
html_last_updated_fmt = None


def keep_tags_out_of_split(app, doctree):
    """Typeset a tagged display equation that contains ``\\\\`` as it is written.

    Sphinx wraps a display equation containing ``\\\\`` (here: the rows of a ``pmatrix``)
    in a ``split`` environment, where MathJax refuses ``\\tag``; such an equation is passed
    to MathJax unwrapped, between ``\\[`` and ``\\]``.

    Parameters
    ----------
    app : sphinx.application.Sphinx
        The application (unused).
    doctree : docutils.nodes.document
        The document just read.
    """
    for node in doctree.findall(nodes.math_block):
        tex = node.astext()
        if r"\tag" in tex and "\\\\" in tex and not node.get("nowrap"):
            node["nowrap"] = True
            node.children = [nodes.Text(r"\[" + tex + r"\]")]


def setup(app):
    """Register the book's own build hook.

    Parameters
    ----------
    app : sphinx.application.Sphinx
        The application.

    Returns
    -------
    dict
        Extension metadata.
    """
    app.connect("doctree-read", keep_tags_out_of_split)
    return {"parallel_read_safe": True}
