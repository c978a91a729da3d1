"""IcedTea's running example: a fraud-detection pipeline with a bug in Feature Enrichment.

payments (customer, amount, currency) → Feature Enrichment (highest payment per customer,
in dollars; the bug: it takes ¥5,000 for $5,000) → Fraud Detector (a model rule and a
blacklist) → Fraud Filter (counts frauds, lets approved payments through).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from icedtea_jupyter import Operator

YEN_PER_DOLLAR = 150.0

PAYMENTS = [
    ("Alice", 120.0, "$"), ("Bob", 45.0, "$"), ("Chris", 80.0, "$"), ("Dana", 30.0, "$"),
    ("Alice", 60.0, "$"), ("Chris", 10.0, "$"), ("Bob", 5000.0, "¥"), ("Dana", 95.0, "$"),
    ("Bob", 20.0, "$"), ("Alice", 75.0, "$"), ("Erin", 2500.0, "$"), ("Chris", 35.0, "$"),
    ("Dana", 15.0, "$"), ("Bob", 12.0, "$"), ("Erin", 40.0, "$"), ("Alice", 25.0, "$"),
]


class FeatureEnrichment(Operator):
    """Adds each customer's highest payment so far, in dollars."""

    def open(self) -> None:
        self.highest: dict[str, float] = {}

    def process(self, payment: Any) -> Iterator[tuple[str, float, float]]:
        amount = payment.amount  # BUG: ignores payment.currency (¥5,000 is about $33)
        customer = payment.customer
        self.highest[customer] = max(self.highest.get(customer, 0.0), amount)
        yield customer, amount, self.highest[customer]


class FraudDetector(Operator):
    """Flags a payment above the model's limit, and every payment of a blacklisted customer."""

    limit = 1000.0

    def open(self) -> None:
        self.blacklist: set[str] = set()
        self.checked = 0

    def process(self, enriched: tuple[str, float, float]) -> Iterator[tuple[str, float, bool]]:
        customer, amount, highest = enriched
        self.checked += 1
        if highest > self.limit:
            self.blacklist.add(customer)
        yield customer, amount, customer in self.blacklist


class FraudFilter(Operator):
    """Counts frauds and lets the approved payments through."""

    def open(self) -> None:
        self.frauds = 0

    def process(self, flagged: tuple[str, float, bool]) -> Iterator[tuple[str, float]]:
        customer, amount, fraud = flagged
        if fraud:
            self.frauds += 1
        else:
            yield customer, amount


PIPELINE = """
payments = spark.createDataFrame(PAYMENTS, "customer string, amount double, currency string")
approved = (payments.rdd.keyBy(lambda r: r.customer).partitionBy(2).values()
            .mapPartitions(FeatureEnrichment()).setName("enrich")
            .mapPartitions(FraudDetector()).setName("detect")
            .mapPartitions(FraudFilter()).setName("filter")
            .collect())
"""
