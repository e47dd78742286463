"""The template agent for the Gbely oil battle.

A complete agent that plays a whole match, deliberately naively: every one of your cells
attacks its weakest visible neighbour with everything it has, and nothing is planned.
Start from here and make it better.

Run it against the Council:      gbely my_agent.py
Check it before you submit:      gbely check my_agent.py
"""

# The constants of the rules (SPEC §12): production, terrain bonuses, round count, ...
# `pravidla` imports nothing; the engine puts it next to your agent.
import pravidla


def obrana(pole):
    """The defence of a foreign cell: garrison × terrain bonus + fortification (rules § 06)."""
    return pole["posadka"] * pravidla.TERENNY_BONUS[pole["typ"]] + pole["opevnenie"]


def decide(stav):
    """Called once per round with the observation; returns the commands for this round.

    stav = {
        "kolo": 42,                      # round, 0 … 149
        "moja_zakladna": "P57_02",       # your home base
        "moje_pola": [                   # your cells: id, typ, jednotky, opevnenie, susedia
            {"id": "P12_07", "typ": "luka", "jednotky": 14.0, "opevnenie": 1.0,
             "susedia": ["P11_07", "P13_07", "P12_06", "P12_08"]},
        ],
        "viditelne_susedne_pola": [      # foreign cells next to yours
            {"id": "P14_07", "vlastnik": "hbp", "posadka": 5.0, "opevnenie": 0.0, "typ": "luka"},
        ],
    }
    """
    # Foreign cells by id, so each of our cells can look its neighbours up.
    cudzie = {pole["id"]: pole for pole in stav["viditelne_susedne_pola"]}

    prikazy = []
    for pole in stav["moje_pola"]:
        # The weakest foreign neighbour of this cell (own neighbours are not in `cudzie`).
        susedia = [cudzie[s] for s in pole["susedia"] if s in cudzie]
        if not susedia:
            continue  # an interior cell: this naive agent leaves its units where they are
        najslabsi = min(susedia, key=obrana)
        # Combat is strict: we need MORE than the defence. Attack with everything we have.
        if pole["jednotky"] > obrana(najslabsi):
            prikazy.append({
                "typ": "ATTACK",
                "z": pole["id"],
                "na": najslabsi["id"],
                "pocet": pole["jednotky"],
            })

    # Other commands:
    #   {"typ": "MOVE", "z": own_cell, "na": neighbouring_own_cell, "pocet": n}
    #   {"typ": "FORTIFY", "pole": own_cell, "investicia": n}   (usually a bad trade)
    #
    # Notes for the replay (the judge ignores them): what you print() while deciding, and
    #   return {"prikazy": prikazy, "debug": {"text": "plan: …", "cells": {cell_id: "why"}}}
    # `gbely replay view` shows them at their round and on their cells.
    return {"prikazy": prikazy}
