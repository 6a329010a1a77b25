"""Write applicants.csv: a synthetic hiring data set with three origins and two sexes.

Run ``python datasets/applicants/make.py`` to rewrite the file identically (numpy's
``default_rng(22)``). See README.md for what it is built to show.
"""

from pathlib import Path

import numpy as np

N = 3000
ORIGINS = ("north", "south", "east")  # north privileged; south large, east small
SHARES = (0.40, 0.45, 0.15)
HIRED = {"north": 0.50, "south": 0.30, "east": 0.70}  # P(hired | origin) for men
FEMALE_SHIFT = -0.08  # women are hired a little less often within each origin


def main() -> None:
    rng = np.random.default_rng(22)
    origin = rng.choice(np.array(ORIGINS), size=N, p=SHARES)
    sex = np.where(rng.random(N) < 0.5, "Female", "Male")
    rate = np.array([HIRED[o] for o in origin]) + FEMALE_SHIFT * (sex == "Female")
    hired = (rng.random(N) < rate).astype(int)
    score = rng.normal(size=N) + 1.2 * (2 * hired - 1)
    experience = np.round(np.clip(rng.normal(6, 3, N) + 1.5 * hired, 0, None), 1)
    # a proxy of origin, as a postcode would be: the model can see group membership
    distance = np.round(rng.normal(0, 1, N) + 2.0 * rate, 2)
    lines = ["score,experience,distance,sex,origin,hired"]
    lines += [f"{s:.3f},{e},{d},{x},{o},{h}"
              for s, e, d, x, o, h in zip(score, experience, distance, sex, origin, hired)]
    (Path(__file__).resolve().parent / "applicants.csv").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
