"""`monopoly report`: plots of an exported DuckDB file, as PNGs and one HTML page."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import duckdb
import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

#: Where each of the 40 squares sits on an 11 x 11 grid: Go bottom right, counter-clockwise (B1).
GRID = (
    [(10, 10 - i) for i in range(11)]
    + [(10 - i, 0) for i in range(1, 11)]
    + [(0, i) for i in range(1, 11)]
    + [(i, 10) for i in range(1, 10)]
)


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[Any, ...]]:
    return con.execute(sql).fetchall()


def game_length(con: duckdb.DuckDBPyConnection, fig: Figure) -> str:
    ax = fig.subplots()
    data = _rows(con, "SELECT mode, list(game_minutes) FROM games WHERE finished GROUP BY mode ORDER BY mode")
    for mode, minutes in data:
        ax.hist([float(m) for m in minutes], bins=20, alpha=0.6, label=f"{mode} ({len(minutes)})")
    ax.set_xlabel("game minutes (game clock, pauses excluded)")
    ax.set_ylabel("games")
    ax.set_title("Game length by mode")
    if data:
        ax.legend()
    return f"{sum(len(m) for _, m in data) if data else 0} finished games"


def landing_heat_map(con: duckdb.DuckDBPyConnection, fig: Figure) -> str:
    counts = dict(_rows(con, "SELECT square, landings FROM landings"))
    names = dict(_rows(con, "SELECT square, any_value(name) FROM board_squares GROUP BY square"))
    grid = [[float("nan")] * 11 for _ in range(11)]
    for square, (row, col) in enumerate(GRID):
        grid[row][col] = float(counts.get(square, 0))
    ax = fig.subplots()
    image = ax.imshow(grid, cmap="YlOrRd")
    for square, (row, col) in enumerate(GRID):
        label = f"{square}\n{str(names.get(square, ''))[:10]}"
        ax.text(col, row, label, ha="center", va="center", fontsize=4.5)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title("Landings per square (every Moved event's destination)")
    fig.colorbar(image, ax=ax, shrink=0.8)
    total = sum(int(v) for v in counts.values())
    return f"{total} moves"


def rent_by_group(con: duckdb.DuckDBPyConnection, fig: Figure) -> str:
    data = _rows(con, "SELECT colour_group, coalesce(group_name, kind), total FROM rents_by_group")
    labels = [f"{g}: {k}" if g else "railroads, utilities" for g, k, _ in data]
    ax = fig.subplots()
    ax.bar(labels, [float(t) for _, _, t in data])
    ax.set_ylabel("rent paid (dollars in the table's scale)")
    ax.set_title("Rent income by colour group (0: railroads and utilities)")
    ax.tick_params(axis="x", rotation=45)
    return f"{len(data)} groups"


def end_reasons(con: duckdb.DuckDBPyConnection, fig: Figure) -> str:
    data = _rows(con, "SELECT coalesce(end_reason, 'unfinished'), count(*) FROM games GROUP BY 1 ORDER BY 2 DESC")
    ax = fig.subplots()
    ax.bar([str(r) for r, _ in data], [int(n) for _, n in data])
    ax.set_ylabel("games")
    ax.set_title("How games ended (G10)")
    return ", ".join(f"{r}: {n}" for r, n in data)


def casino_rtp(con: duckdb.DuckDBPyConnection, fig: Figure) -> str:
    """Return to player by numbers picked, against K2's expectation payout_base / (6 x stake)."""
    data = _rows(
        con,
        """
        SELECT len(b.numbers) AS k, count(*) AS bets, sum(b.payout) / sum(b.stake) AS rtp,
               (sum(b.payout) + sum(CASE WHEN b.jackpot_hit THEN b.jackpot ELSE 0 END)) / sum(b.stake) AS with_jackpot,
               avg(t.casino_payout_base / (6.0 * t.casino_stake)) AS expected
        FROM casino_bets b JOIN tables t USING (table_id)
        WHERE b.payout IS NOT NULL GROUP BY k ORDER BY k
        """,
    )
    ax = fig.subplots()
    ks = [int(k) for k, *_ in data]
    ax.bar([k - 0.2 for k in ks], [float(r) for _, _, r, _, _ in data], width=0.4, label="die (K2)")
    ax.bar([k + 0.2 for k in ks], [float(j) for _, _, _, j, _ in data], width=0.4, label="with jackpot (K3)")
    for _, _, _, _, e in data:
        ax.axhline(float(e), color="black", linestyle="--", linewidth=1)
    ax.set_xlabel("numbers picked (K)")
    ax.set_ylabel("paid out / staked")
    ax.set_title("Casino return to player against the rules' expectation (dashed)")
    if data:
        ax.legend()
    return "; ".join(f"K={k}: {n} bets, RTP {float(r):.2f} (expected {float(e):.2f})" for k, n, r, _, e in data)


def auction_prices(con: duckdb.DuckDBPyConnection, fig: Figure) -> str:
    data = _rows(con, "SELECT list_price, price, reason FROM auctions WHERE winner >= 0 AND list_price > 0")
    ax = fig.subplots()
    reasons = sorted({str(r) for _, _, r in data})
    for reason in reasons:
        points = [(float(lp), float(p)) for lp, p, r in data if r == reason]
        ax.scatter([lp for lp, _ in points], [p for _, p in points], s=10, alpha=0.6, label=reason)
    top = max([float(lp) for lp, _, _ in data] or [1.0])
    ax.plot([0, top], [0, top], color="black", linewidth=1, linestyle="--")
    ax.set_xlabel("list price")
    ax.set_ylabel("price paid")
    ax.set_title("Auction price against list price (dashed: equal)")
    if reasons:
        ax.legend()
    return f"{len(data)} auctions won"


PLOTS = {
    "game_length": game_length,
    "landing_heat_map": landing_heat_map,
    "rent_by_group": rent_by_group,
    "end_reasons": end_reasons,
    "casino_rtp": casino_rtp,
    "auction_prices": auction_prices,
}


def report(db: Path, out: Path) -> Path:
    """Every plot as `<out>/<name>.png` and `<out>/index.html` showing them; returns the page."""
    out.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(db), read_only=True)
    sections = []
    try:
        (n_events,) = con.execute("SELECT count(*) FROM events").fetchone() or (0,)
        (n_dead,) = con.execute("SELECT count(*) FROM dead_letters").fetchone() or (0,)
        for name, plot in PLOTS.items():
            fig = plt.figure(figsize=(8, 8) if name == "landing_heat_map" else (8, 4.5), dpi=110)
            try:
                caption = plot(con, fig)
                fig.tight_layout()
                fig.savefig(out / f"{name}.png")
            finally:
                plt.close(fig)
            sections.append(
                f"<h2>{html.escape(name.replace('_', ' '))}</h2><p>{html.escape(caption)}</p>"
                f'<img src="{name}.png" alt="{html.escape(name)}">'
            )
    finally:
        con.close()
    page = out / "index.html"
    page.write_text(
        "<!doctype html><meta charset='utf-8'><title>Monopoly platform report</title>"
        "<style>body{font-family:sans-serif;max-width:900px;margin:auto}img{max-width:100%}</style>"
        f"<h1>Monopoly platform report</h1><p>{n_events} events from {html.escape(str(db))}; "
        f"{n_dead} undecodable message(s) in dead_letters.</p>" + "".join(sections) + "\n"
    )
    return page
