"""Campaigns: many seeds of the machines run as Spark tasks, their departures grouped."""
