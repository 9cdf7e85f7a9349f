"""The application layer: the rules every flow (run and evaluate, rounds, trigger, improve,
optimize-description, draft-cases) shares, each written once, asked by the command line and
the screens alike. agent: the executor chosen and made; placement: how the agents are held; trust:
what needs the person's trust; cost: whether to ask before spending."""
