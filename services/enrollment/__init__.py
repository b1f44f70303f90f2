"""Enrollment (matrícula): collects a plan, preferred days and time and a way to pay, and makes
a request staff follow up; it never charges."""
