"""Constructors of count mechanisms (MATH.md sections 5-8)."""
