"""Derive adult_small.csv from the Adult training file next door (datasets/adult/adult.data.gz).

A small CSV with a sensitive attribute for the README's "bring your own data" example: 2,000
rows drawn without replacement (numpy seed 0) from the 32,561 training rows, five numeric
features, the ``sex`` column as the group and ``income`` as the label (1 for ">50K", else 0).
Run from the repository root: ``python datasets/adult_small/make.py`` rewrites the file
byte for byte.
"""

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
COLUMNS = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
           "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
           "hours_per_week", "native_country", "income"]
KEEP = ["age", "education_num", "capital_gain", "capital_loss", "hours_per_week", "sex", "income"]


def main() -> None:
    frame = pd.read_csv(HERE.parent / "adult" / "adult.data.gz", header=None, names=COLUMNS,
                        skipinitialspace=True)
    rows = np.sort(np.random.default_rng(0).choice(len(frame), size=2000, replace=False))
    small = frame.iloc[rows][KEEP].copy()
    small["income"] = (small["income"] == ">50K").astype(int)
    small.to_csv(HERE / "adult_small.csv", index=False, lineterminator="\n")


if __name__ == "__main__":
    main()
