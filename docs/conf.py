"""Sphinx configuration of the mklcore book (built by ``make book``; see docs/README.md).

Sphinx with MyST-NB and the Sphinx Book Theme is the engine and look of Jupyter Book 1, used
directly: the site renders the executed notebooks committed under ``figures/`` without running
them, and ``sphinx.ext.autodoc`` with ``numpydoc`` turns the numpydoc docstrings into the API
reference. MathJax 3 is served from the book itself (the ``sphinx-mathjax-offline`` package
bundles it), so pages typeset their equations with no network access.
"""

import re
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
    "numpydoc",
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

# API reference from the numpydoc docstrings; numpydoc (rather than napoleon) renames each
# docstring's reference labels [1], [2] so that many docstrings can share one page
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {
    "members": True,
    "show-inheritance": True,
    # written by scikit-learn's metadata routing on every estimator class
    "exclude-members": ("set_fit_request, set_score_request, set_predict_request, "
                        "set_decision_function_request"),
}
numpydoc_show_class_members = False
numpydoc_xref_param_type = False

html_theme = "sphinx_book_theme"
html_title = f"mklcore {version}"
html_theme_options = {
    "home_page_in_toc": True,
    "show_navbar_depth": 1,
    "show_toc_level": 2,
    # the sidebar has the search field; no second one in a header bar above the page
    "navbar_persistent": [],
}
html_static_path = ["_static"]
html_css_files = ["book.css"]


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


CITATION_DEF = re.compile(r"^\s*\.\. \[(\w+)\]")
CITATION_REF = re.compile(r"\[(\w+)\]_")


def plain_outside_citations(app, what, name, obj, options, lines):
    """Show ``[1]_`` as plain ``[1]`` when the docstring does not define ``.. [1]``.

    The method modules list the paper once, in the module docstring's references, and their
    functions cite it as ``[1]_``; a docstring rendered on its own has no such target.

    Parameters
    ----------
    app : sphinx.application.Sphinx
        The application (unused).
    what, name, obj, options
        What autodoc documents (unused).
    lines : list of str
        The docstring's lines, changed in place.
    """
    defined = {m.group(1) for line in lines if (m := CITATION_DEF.match(line))}
    lines[:] = [CITATION_REF.sub(lambda m: m.group(0) if m.group(1) in defined
                                 else f"[{m.group(1)}]", line) for line in lines]


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
    app.connect("autodoc-process-docstring", plain_outside_citations, priority=900)
    return {"parallel_read_safe": True}
