# The image that qualifies kvqual in a cluster (examples/k8s/qualify-job.yaml): a whole checkout
# with the development dependencies (cucumber, tsc, c8) and git, so the sign-off names the commit.
# Build it from a checkout without node_modules (its .git included):
#   docker build -f examples/k8s/qualify.Dockerfile -t kvqual-qualify:0.1.0 .
FROM node:20.20-bookworm
WORKDIR /opt/kvqual
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
