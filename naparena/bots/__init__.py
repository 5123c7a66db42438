"""Players: the Bot base class, plug-in loading, and naparena's own bots."""
