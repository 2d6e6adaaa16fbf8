"""The pure rules engines (battle, tournament) and their data: one profile per regulation."""
