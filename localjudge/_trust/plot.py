"""An agreement report as a picture: the reliability diagram beside the confusion matrix."""

from __future__ import annotations

from pathlib import Path

from ..errors import MissingDependencyError
from .agreement import AgreementReport

__all__ = ["SOFTWARE", "check_matplotlib", "is_plot", "plot_agreement"]

#: what a plot's PNG says made it (its Software text), so that a later run tells its own plot from another picture
SOFTWARE = "localjudge"
_PNG = b"\x89PNG\r\n\x1a\n"


def check_matplotlib() -> None:
    """Fail now, with the command to run, when matplotlib is not installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError("Plotting a report", "matplotlib", "plot") from exc


def plot_agreement(report: AgreementReport, target: Path, *, title: str = "") -> Path:
    """Write a PNG: how often verdicts of each confidence were right, and what the judge called each label."""
    check_matplotlib()
    import matplotlib

    matplotlib.use("Agg")  # files only; never a window
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.8), constrained_layout=True)
    _reliability(left, report)
    _confusion(right, report)
    summary = f"{report.compared} rows, accuracy {_number(report.accuracy)}, kappa {_number(report.kappa)}"
    if report.position_consistency is not None:
        summary += f", position consistency {_number(report.position_consistency)}"
    figure.suptitle(f"{title}\n{summary}" if title else summary)
    target.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(target, dpi=120, format="png", metadata={"Software": SOFTWARE})
    plt.close(figure)
    return target


def is_plot(path: Path) -> bool:
    """Whether ``path`` is a PNG this module drew: its text chunks, before the image, name us as its software."""
    with Path(path).open("rb") as handle:
        head = handle.read(1 << 16)
    return head.startswith(_PNG) and b"tEXtSoftware\x00" + SOFTWARE.encode() in head


def _reliability(axes, report: AgreementReport) -> None:
    axes.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1, label="perfectly calibrated")
    filled = [b for b in report.reliability if b.count]
    if filled:
        width = filled[0].high - filled[0].low
        axes.bar(
            [b.low for b in filled],
            [b.accuracy for b in filled],
            width=width,
            align="edge",
            edgecolor="black",
            color="#4c72b0",
            alpha=0.8,
            label="share right",
        )
        axes.plot([b.mean_confidence for b in filled], [b.accuracy for b in filled], "o", color="#dd8452",
                  label="mean confidence")  # fmt: skip
        for b in filled:
            axes.annotate(str(b.count), (b.low + width / 2, b.accuracy), ha="center", va="bottom", fontsize=8)
        axes.set_title(f"Reliability (ECE {_number(report.ece)}, {report.with_probabilities} verdicts)")
        axes.legend(loc="upper left", fontsize=8)
    else:
        axes.text(0.5, 0.5, "no probabilities in these results", ha="center", va="center")
        axes.set_title("Reliability")
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1.05)
    axes.set_xlabel("judge's confidence in its verdict")
    axes.set_ylabel("share of verdicts that match the label")


def _confusion(axes, report: AgreementReport) -> None:
    classes, matrix = report.classes, report.confusion
    if not classes:
        axes.text(0.5, 0.5, "no rows with both a verdict and a label", ha="center", va="center")
        axes.set_axis_off()
        return
    image = axes.imshow(matrix, cmap="Blues")
    peak = max(max(row) for row in matrix) or 1
    for i, row in enumerate(matrix):
        for j, count in enumerate(row):
            axes.text(j, i, str(count), ha="center", va="center", color="white" if count > peak / 2 else "black")
    axes.set_xticks(range(len(classes)), classes)
    axes.set_yticks(range(len(classes)), classes)
    axes.set_xlabel("judge's verdict")
    axes.set_ylabel("label")
    axes.set_title("Confusion matrix")
    axes.figure.colorbar(image, ax=axes, shrink=0.8)


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
