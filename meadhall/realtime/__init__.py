"""Events, their audiences, and the bus that carries them between nodes."""
