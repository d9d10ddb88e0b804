"""The values of POSENC_SANDBOX_MODE, declared once: the settings check them at the edge (grader/settings.py) and
the sandbox's policy decides from them (confine/policy.py). Standard library only, no imports: it is copied flat
into the zygote's runtime folder, and imported as `grader.sandbox.modes` by the grader.
"""

# auto: the strongest mode this machine offers; nojail: no private file-system view; user (as root): uid 0
# without capabilities under Landlock; nolandlock: no Landlock
FORCED = ("auto", "nojail", "user", "nolandlock")
