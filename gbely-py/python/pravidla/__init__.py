"""Constants of the Gbely rules (SPEC §12). This module imports nothing."""

PRODUKCIA = {"luka": 3, "vrch": 2, "rieka": 1}
TERENNY_BONUS = {"luka": 1.0, "vrch": 1.5, "rieka": 1.3}
PRIECHODNOST = {"luka": 1.0, "vrch": 0.6, "rieka": 1.0}
BONUS_ZAKLADNE = 5
UCINNOST_OPEVNENIA = 0.3
ZACIATOCNE_JEDNOTKY = 10
VELKOST_MAPY = 60
POCET_KOL = 150
POSADKA_NEUTRAL = (1, 8)
LIMIT_KOLA_S = 2
POVOLENE_PORUSENIA = 3
REFERENCNA_MAPA = "gbely"
