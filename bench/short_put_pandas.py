"""The SPY short put of examples/spy-short-put.ts as users write it today: pandas over CSV exports.

    python3 bench/short_put_pandas.py <csv dir> <first session> <last session>

<csv dir> holds option_quotes.csv, contracts.csv and stock_bars.csv of SPY (`pitchain export` of each
table to Parquet, then to CSV with a header; instants as `YYYY-MM-DD HH:MM:SS+00`). Prints one JSON
object: the trades as [session, symbol, quantity, price], `readSeconds` (the CSV reads and the parsing of
their instants) and `runSeconds` (everything after: the joins, the session loop, the trades).

It decides as the pitchain run with `greeks: 'vendor'` does, rule for rule:
- Decisions at 16:00 ET of each session (also on early closes), where end-of-day snapshots are stamped.
- A contract's quote at a decision is its latest snapshot with quote time at or before the decision
  instant, so nothing is read before it was known. An order fills only on a price: bid and ask above 0,
  not crossed, with size, quoted at most 15 minutes before the decision (or before the session's close,
  the close being the end of the session's last minute bar, when that is earlier); else nothing fills.
- The expiration is the one the service's `dte=30` picks: among the standard expirations, not expired,
  of the contracts quoted so far, the one whose calendar days from the session are closest to 30 (the
  earlier on a tie). Then the put whose delta is nearest -0.30 among its puts with bid > 0, the first in
  strike order on a tie.
- Delta: Black-Scholes at the snapshot's vendor IV, rate 0, years = (expiration time - quote time) / 365
  days, rounded to 3 decimals half up (as pitchain computes it when the store has no vendor delta; a
  snapshot without a vendor IV gets no delta here, where pitchain would imply one from the mid: the data
  has an IV on every snapshot).
- Fills at the mid to 1/10,000; the mark is the service's mid (the exact (bid + ask) / 2 rounded half up
  to the cent, as the chain prints it), and the put is bought back once the mark
  is at most half the premium. Expiring puts settle at the close of their expiration session (SPY's daily
  bar): assigned 100 shares at the close when in the money by a cent or more, else expired. Shares are
  sold at the next decision at the stock quote the default (non-professional) account sees then: the
  close of the latest minute bar ended 15 minutes before the decision.
"""

import json
import math
import sys
import time
from datetime import date

import pandas as pd

TARGET_DTE = 30
TARGET_DELTA = -0.30
PROFIT_TAKE = 0.5
SECONDS_PER_YEAR = 365 * 86_400
STOCK_DELAY_SECONDS = 15 * 60
MAX_QUOTE_AGE_SECONDS = 15 * 60


def js_round(x):
    """JavaScript's Math.round: the nearest integer, halves toward +infinity."""
    floor = math.floor(x)
    return floor + 1 if x - floor >= 0.5 else floor


def round_price(x):
    return js_round(x * 10_000) / 10_000


def service_mid(bid, ask):
    """The service's mid: (bid + ask) / 2 half up to the cent on the exact decimal prices."""
    total = js_round(bid * 10_000) + js_round(ask * 10_000)
    return ((total + 100) // 200) / 100


def put_delta(spot, strike, years, vol):
    """Black-Scholes put delta at rate 0, to 3 decimals; None when the inputs cannot give one."""
    if not (vol > 0 and spot > 0 and strike > 0 and years > 0):
        return None
    d1 = (math.log(spot / strike) + (0 + 0.5 * vol * vol) * years) / (vol * math.sqrt(years))
    delta = 0.5 * math.erfc(-d1 / math.sqrt(2)) - 1
    return js_round(delta * 1000) / 1000 or 0.0  # -0.0 as 0, as pitchain prints it


def epoch_seconds(text):
    return (pd.to_datetime(text, utc=True) - pd.Timestamp(0, tz="UTC")) // pd.Timedelta(seconds=1)


def read(directory):
    quotes = pd.read_csv(
        f"{directory}/option_quotes.csv",
        usecols=[
            "option_symbol",
            "session_date",
            "quote_time",
            "bid",
            "ask",
            "bid_size",
            "ask_size",
            "underlying_price",
            "iv",
        ],
    )
    quotes["quote_time"] = epoch_seconds(quotes["quote_time"])
    contracts = pd.read_csv(
        f"{directory}/contracts.csv",
        usecols=["option_symbol", "expiration", "expiration_time", "side", "strike", "nonstandard"],
    )
    contracts["expiration_time"] = epoch_seconds(contracts["expiration_time"])
    bars = pd.read_csv(
        f"{directory}/stock_bars.csv",
        usecols=["resolution", "session_date", "t", "c"],
        dtype={"resolution": str},
    )
    bars["t"] = epoch_seconds(bars["t"])
    return quotes, contracts, bars


def run(quotes, contracts, bars, first, last):
    quotes = quotes.merge(contracts[~contracts["nonstandard"]], on="option_symbol")
    # Sorted by quote time, the snapshots known at an instant are a prefix.
    quotes = quotes.sort_values(["quote_time", "option_symbol"], kind="stable", ignore_index=True)
    times = quotes["quote_time"].to_numpy()
    by_symbol = quotes.set_index("option_symbol").sort_index(kind="stable")

    daily = bars[bars["resolution"] == "D"].set_index("session_date")["c"]
    minutes = bars[bars["resolution"] != "D"].sort_values("t", ignore_index=True)
    closes = minutes.groupby("session_date")["t"].max() + 60
    sessions = [s for s in closes.index if first <= s <= last]

    def latest(symbol, now):
        """A contract's latest snapshot at or before `now`, or None."""
        rows = by_symbol.loc[[symbol]]
        rows = rows[rows["quote_time"] <= now]
        return None if rows.empty else rows.iloc[rows["quote_time"].to_numpy().argmax()]

    def stock_quote(session, now):
        """The delayed quote: the session's latest minute bar ended by now - 15 min, else the last close."""
        ended = minutes["t"] + 60 <= now - STOCK_DELAY_SECONDS
        known = minutes[(minutes["session_date"] == session) & ended]
        if not known.empty:
            return known["c"].iloc[-1]
        return daily[daily.index < session].iloc[-1]

    def fillable(quote, session, now):
        """A price (two-sided, not crossed, with size) no older than the limit at the decision."""
        if not (quote.bid > 0 and quote.ask > 0 and quote.ask >= quote.bid):
            return False
        if quote.bid_size == 0 or quote.ask_size == 0:
            return False
        return min(now, int(closes[session])) - quote.quote_time <= MAX_QUOTE_AGE_SECONDS

    trades = []
    option = None  # the short put: symbol, strike, expiration, premium
    shares = 0

    for session in sessions:
        now = int(pd.Timestamp(f"{session} 16:00", tz="America/New_York").timestamp())
        if option is not None:
            quote = latest(option["symbol"], now)
            if quote is not None and fillable(quote, session, now):
                mid = (quote["bid"] + quote["ask"]) / 2
                if service_mid(quote["bid"], quote["ask"]) <= option["premium"] * PROFIT_TAKE:
                    trades.append([session, option["symbol"], 1, round_price(mid)])
                    option = None
        elif shares != 0:
            trades.append([session, "SPY", -shares, round_price(stock_quote(session, now))])
            shares = 0
        else:
            known = quotes.iloc[: times.searchsorted(now, side="right")]
            chain = known[known["expiration"] >= session].drop_duplicates("option_symbol", keep="last")
            # The service's dte rule: the closest in calendar days, the earlier on a tie.
            expirations = sorted(chain["expiration"].unique())
            today = date.fromisoformat(session)
            expiration = min(
                expirations, key=lambda e: abs((date.fromisoformat(e) - today).days - TARGET_DTE)
            )
            puts = chain[(chain["expiration"] == expiration) & (chain["side"] == "put")]
            puts = puts.sort_values(["strike", "option_symbol"], kind="stable")
            best = None
            for row in puts.itertuples(index=False):
                delta = put_delta(
                    row.underlying_price,
                    row.strike,
                    (row.expiration_time - row.quote_time) / SECONDS_PER_YEAR,
                    row.iv,
                )
                if delta is None or not row.bid > 0:
                    continue
                if best is None or abs(delta - TARGET_DELTA) < abs(best[1] - TARGET_DELTA):
                    best = (row, delta)
            if best is not None and fillable(best[0], session, now):
                row = best[0]
                premium = round_price((row.bid + row.ask) / 2)
                trades.append([session, row.option_symbol, -1, premium])
                option = {
                    "symbol": row.option_symbol,
                    "strike": row.strike,
                    "expiration": row.expiration,
                    "premium": premium,
                }

        # After the close: the put expires and settles at its session's close (every SPY expiration of
        # the data is a session: there is no holiday-shifted one to settle later).
        if option is not None and option["expiration"] <= session:
            settlement = daily[option["expiration"]]
            intrinsic = round_price(max(0.0, option["strike"] - settlement))
            trades.append([session, option["symbol"], 1, intrinsic])
            if intrinsic >= 0.01:
                trades.append([session, "SPY", 100, settlement])
                shares = 100
            option = None
    return trades


def main():
    directory, first, last = sys.argv[1:4]
    started = time.perf_counter()
    quotes, contracts, bars = read(directory)
    read_done = time.perf_counter()
    trades = run(quotes, contracts, bars, first, last)
    finished = time.perf_counter()
    json.dump(
        {"trades": trades, "readSeconds": read_done - started, "runSeconds": finished - read_done},
        sys.stdout,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
