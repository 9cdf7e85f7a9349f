"""The application layer: every flow (run and evaluate, rounds, trigger, improve, optimize-description,
draft-cases, versions, review, validate) and the rules they share, each written once, asked by the command
line and the screens alike; they import nothing below it but the session, the formats and the file types
(tests/test_layers.py). agent: the executor chosen and made; placement: how the agents are held; trust: what
needs the person's trust; cost: whether to ask before spending; offered: the lists of choices the edges show;
progress: what a flow reports as it goes."""
